"""On a CUDA run, row 5's `gpu_count` becomes 2 while its device map shows one GPU (re-hashed):
only A0402 counts the GPUs the placement evidence holds."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cuda"


def mutate(root: Path) -> None:
    rf.edit_rows(root, lambda rows: rows[4].update(gpu_count="2"))


MUTATION = mutate
