"""Row 4's `experiment_id` becomes another experiment's (re-hashed): only A0306 compares each
row's experiment with the manifest's."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(root, lambda rows: rows[3].update(experiment_id="exp-precision"))


MUTATION = mutate
