"""cpu trial 2's answers and latencies are trial 1's, copied (the same values, so every p95 and
sum claimed stays right): only B0305 compares the trials' latency sequences."""

from __future__ import annotations

import shutil
from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    shutil.copy(root / "outputs/cpu/trial-1.jsonl", root / "outputs/cpu/trial-2.jsonl")
    br.rehash(root)


MUTATION = mutate
