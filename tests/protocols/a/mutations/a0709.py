"""On a CUDA run, batch-1's warm-2 memory_stats peak allocated counter gains 4 KiB, the figures
left as they were (re-hashed): only A0709 compares the figures with their counters."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cuda"


def mutate(root: Path) -> None:
    def stats(d: dict) -> None:
        d["memory_stats_after"]["allocated_bytes.all.peak"] += 4096

    rf.edit_json(root, "traces/memory/batch-1/warm-2.json", stats)


MUTATION = mutate
