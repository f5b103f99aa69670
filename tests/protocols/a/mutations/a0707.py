"""On a CUDA run, batch-1's warm-2 peak reserved figure is not recorded, null in the trace and
empty in the row: only A0707 points out a GPU memory figure missing (a warning)."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cuda"


def mutate(root: Path) -> None:
    rf.edit_json(
        root,
        "traces/memory/batch-1/warm-2.json",
        lambda d: rf.set_at(d, "peak_reserved_bytes", None),
    )
    rf.edit_rows(
        root, lambda rows: rf.pass_row(rows, "batch-1", "warm", 2).update(peak_reserved_bytes="")
    )


MUTATION = mutate
