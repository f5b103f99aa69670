"""A workload trained at run time: its `model/recipe.json` says seed 8 while the manifest
announces seed 7; `revisions.recipe` is re-pinned to the edited file (re-hashed), so the
recipe's hash agrees and only A0108, which compares what the recipe states with the run,
sees that it is another run's recipe."""

from __future__ import annotations

import hashlib
from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu+trained"


def mutate(root: Path) -> None:
    rf.edit_json(root, "model/recipe.json", lambda r: r.update(seed=8), rehash=False)
    pinned = "sha256:" + hashlib.sha256((root / "model/recipe.json").read_bytes()).hexdigest()
    rf.edit_json(root, "manifest.json", lambda m: m["revisions"].update(recipe=pinned))


MUTATION = mutate
