"""Row 3's `quality_threshold` becomes 0.5, not the manifest's declared rule (re-hashed): only
A0101 compares each row's quality rule with the declaration."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(root, lambda rows: rows[2].update(quality_threshold="0.5"))


MUTATION = mutate
