"""Row 2's `observed_ids` is emptied, where a value is required (re-hashed): only A0805 checks
where a cell may be empty."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(root, lambda rows: rows[1].update(observed_ids=""))


MUTATION = mutate
