"""The third timeline entry, batch-1's warm-up block, records 2 iterations instead of the
declared number (re-hashed): only A0601 checks the warm-up block."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_timeline(root, lambda t: t[2].update(iterations=2))


MUTATION = mutate
