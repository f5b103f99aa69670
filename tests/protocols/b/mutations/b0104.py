"""The synthetic run's placement floor records that it was declared an hour after the last
trial (`placement.declared_at`), every other declaration as before: only B0104 holds a
declaration to the first trial's start."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import b_runs as br

from ._helpers import edit_manifest

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    edit_manifest(
        root, lambda m: m["placement"].update(declared_at=br.iso(br.T0 + timedelta(hours=1)))
    )


MUTATION = mutate
