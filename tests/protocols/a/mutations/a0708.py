"""A memory trace's other source is named `torch.cuda.memory_reserved`, the caching allocator
itself (re-hashed): only A0708 reads the other sources' names."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_json(
        root,
        "traces/memory/batch-1/warm-2.json",
        lambda d: rf.set_at(d, "other_sources/0/source", "torch.cuda.memory_reserved"),
    )


MUTATION = mutate
