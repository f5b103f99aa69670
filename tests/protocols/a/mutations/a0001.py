"""The manifest's quality threshold becomes the string "0.6": the manifest no longer matches its
schema. The manifest is not in its own hash table, so nothing else changes and only A0001, which
validates the manifest, can see it."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_json(
        root, "manifest.json", lambda m: rf.set_at(m, "quality_rule/threshold", "0.6"), rehash=False
    )


MUTATION = mutate
