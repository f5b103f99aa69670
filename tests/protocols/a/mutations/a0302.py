"""batch-4's warm-2 row says batch 8, not its variant's declared batch (re-hashed): only A0302
compares each row with its variant's declaration."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(root, lambda rows: rf.pass_row(rows, "batch-4", "warm", 2).update(batch="8"))


MUTATION = mutate
