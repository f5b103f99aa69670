"""The manifest lists `model/extra.bin`, which the run dir does not hold: only B0005 looks for
each listed file."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_manifest

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    edit_manifest(root, lambda m: m["artifacts"].update({"model/extra.bin": "0" * 64}))


MUTATION = mutate
