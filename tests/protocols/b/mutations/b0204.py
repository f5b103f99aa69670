"""The manifest's timer scope becomes "model forward only", leaving tokenization out: only B0204
reads the declared scope (a warning)."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_manifest

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    edit_manifest(root, lambda m: m.update(timer_scope="model forward only"))


MUTATION = mutate
