"""The manifest's `model_tier` becomes `large`, no tier the schema knows: the manifest is not in
its own hash table, so nothing else changes and only B0001, which validates the manifest, can
see it."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_manifest

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    edit_manifest(root, lambda m: m.update(model_tier="large"))


MUTATION = mutate
