"""Row 2's `model_revision` becomes `sha256:another`, not the pinned revision (re-hashed): only
A0102 compares the rows' revisions with the manifest's."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(root, lambda rows: rows[1].update(model_revision="sha256:another"))


MUTATION = mutate
