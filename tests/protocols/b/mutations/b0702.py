"""The macOS run's Neural Engine policy becomes a `.all` GPU retry with a 50 % GPU floor, while
its compute plan puts no operation on the GPU: only B0702 holds a GPU retry to its floor."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

from ._helpers import edit_manifest

TEMPLATE = "macos"


def mutate(root: Path) -> None:
    br.edit_csv(root, "policies.csv", lambda rows: br.row(rows, "ane").update(compute_units="all"))
    edit_manifest(
        root, lambda m: m["policies"][1].update(compute_units="all", gpu_operation_share_floor=0.5)
    )


MUTATION = mutate
