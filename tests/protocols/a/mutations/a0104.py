"""batch-4's warm-5 output file is removed (re-hashed): a CSV row without its output file, which
only A0104 pairs rows and files to see."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    (root / "outputs/batch-4/warm-5.jsonl").unlink()
    rf.rehash(root)


MUTATION = mutate
