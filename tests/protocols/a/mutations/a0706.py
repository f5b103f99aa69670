"""On a CUDA run, batch-1's warm-2 baseline allocated bytes become 0, in the trace (with its
counter) and in the row alike: only A0706 says a zero on the GPU is not a measurement."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

from ._helpers import set_trace_figure

TEMPLATE = "cuda"


def mutate(root: Path) -> None:
    rf.edit_json(
        root,
        "traces/memory/batch-1/warm-2.json",
        lambda d: set_trace_figure(d, "baseline_allocated_bytes", 0),
    )
    rf.edit_rows(
        root,
        lambda rows: rf.pass_row(rows, "batch-1", "warm", 2).update(baseline_allocated_bytes="0"),
    )


MUTATION = mutate
