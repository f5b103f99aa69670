"""On a CUDA run, batch-1's warm-2 memory trace says it did not synchronize (re-hashed): only
A0701 reads the trace's measuring protocol."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cuda"


def mutate(root: Path) -> None:
    rf.edit_json(
        root, "traces/memory/batch-1/warm-2.json", lambda d: rf.set_at(d, "synchronized", False)
    )


MUTATION = mutate
