"""The declared minimum window becomes 5 s, longer than every window, each energy summary
honestly saying below resolution (so B0604 agrees): only B0603 holds the windows against the
declared minimum."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

from ._helpers import edit_manifest, set_energy_summary

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    for pid, k in ((p, k) for p in ("cpu", "torch-cuda", "ort-cuda") for k in range(1, 6)):
        set_energy_summary(
            pid,
            k,
            status="below_resolution",
            reason="window shorter than 5 s",
            energy_j=None,
            average_power_w=None,
            joules_per_inference=None,
        )(root)
    br.rehash(root)
    edit_manifest(root, lambda m: m["energy"]["minimums"].update(window_seconds=5.0))


MUTATION = mutate
