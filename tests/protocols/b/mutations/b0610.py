"""The Windows run's CPU baseline trial 2: every second HWiNFO row repeats the row before it
(every reading) at its own time, as if a 2 s log had been padded to 1 Hz; the harness
computes every figure from the edited trace. Only B0610 finds samples duplicated onto shifted
times."""

from __future__ import annotations

import b_fixtures as bf
import b_runs as br

from ._helpers import build

TEMPLATE = "windows"


def _pad(spec: br.Spec, w: br.Window, lines: list[bytes]) -> bool:
    if (w.policy_id, w.trial_index) != ("cpu", 2):
        return False
    end = next(i for i, ln in enumerate(lines[1:], start=1) if ln.startswith(b"Date,"))
    for i in range(2, end, 2):
        lines[i] = bf.with_values_of(lines[i], lines[i - 1])
    return True


MUTATION = build(bf.windows_spec(trace=bf.hwinfo_edited(_pad)))
