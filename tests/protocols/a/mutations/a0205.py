"""Row 4's `quality_value` becomes 0.99 (re-hashed): a claimed figure that is not the one
recomputed from the outputs, which only A0205 compares."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(root, lambda rows: rows[3].update(quality_value="0.99"))


MUTATION = mutate
