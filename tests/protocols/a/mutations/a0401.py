"""Row 1's `torch_version` becomes 2.3.0, not the environment's (re-hashed): only A0401 compares
the rows' versions with the observed environment."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(root, lambda rows: rows[0].update(torch_version="2.3.0"))


MUTATION = mutate
