"""On a CUDA run, batch-1's warm-2 trace peak reserved figure gains one byte, with its
memory_stats counter (so A0709 agrees): the row's cell no longer equals the trace, which only
A0702 compares."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

from ._helpers import set_trace_figure

TEMPLATE = "cuda"


def mutate(root: Path) -> None:
    rf.edit_json(
        root,
        "traces/memory/batch-1/warm-2.json",
        lambda d: set_trace_figure(d, "peak_reserved_bytes", d["peak_reserved_bytes"] + 1),
    )


MUTATION = mutate
