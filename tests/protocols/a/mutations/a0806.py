"""The last CSV row is written twice (re-hashed): only A0806 checks one row per pass."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(root, lambda rows: rows.append(dict(rows[-1])))


MUTATION = mutate
