"""The Windows run's CPU baseline trial 3: five of its HWiNFO rows inside the window are the
GPU session's trial 2 rows (every reading, the same five rows in order) under trial 3's
times: the baseline's busy seconds replaced by the GPU session's quiet ones. The harness
computes every figure from the edited trace; the rest of each trace is its own. Only B0609
finds a run of another trace's samples."""

from __future__ import annotations

import b_fixtures as bf
import b_runs as br

from ._helpers import build

TEMPLATE = "windows"


def _splice(spec: br.Spec, w: br.Window, lines: list[bytes]) -> bool:
    if (w.policy_id, w.trial_index) != ("cpu", 3):
        return False
    donor = bf.hwinfo_lines(spec, "gpu", 2)
    for i in range(8, 13):  # rows 8-12: inside the window (3 s of padding before it)
        lines[i] = bf.with_values_of(lines[i], donor[i])
    return True


MUTATION = build(bf.windows_spec(trace=bf.hwinfo_edited(_splice)))
