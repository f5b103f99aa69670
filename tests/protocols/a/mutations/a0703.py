"""On a CUDA run, batch-1's warm-2 peak allocated and peak reserved figures are swapped in the
trace (with its counters) and in the row, consistently: only A0703 checks that allocated is at
most reserved."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

from ._helpers import set_trace_figure

TEMPLATE = "cuda"


def mutate(root: Path) -> None:
    def swap(d: dict) -> None:
        d["peak_allocated_bytes"], d["peak_reserved_bytes"] = (
            d["peak_reserved_bytes"],
            d["peak_allocated_bytes"],
        )

    rf.edit_json(
        root,
        "traces/memory/batch-1/warm-2.json",
        lambda d: (
            swap(d),
            [set_trace_figure(d, k, d[k]) for k in ("peak_allocated_bytes", "peak_reserved_bytes")],
        ),
    )
    rf.edit_rows(root, lambda rows: swap(rf.pass_row(rows, "batch-1", "warm", 2)))


MUTATION = mutate
