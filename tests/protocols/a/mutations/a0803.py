"""Row 2's `ids_match` becomes `yes`, not a boolean (re-hashed): only A0803 checks the cells'
types."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(root, lambda rows: rows[1].update(ids_match="yes"))


MUTATION = mutate
