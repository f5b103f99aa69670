"""environment.json's `python_version` becomes the number 3 (re-sealed): a JSON artifact that
breaks its schema, which only B0002 validates."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    br.edit_json(root, "environment.json", lambda e: e.update(python_version=3))


MUTATION = mutate
