"""environment.json's `gpu_count` becomes the string "one" (re-hashed): a JSON artifact that
breaks its schema, which only A0002 validates."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_json(root, "environment.json", lambda e: rf.set_at(e, "gpu_count", "one"))


MUTATION = mutate
