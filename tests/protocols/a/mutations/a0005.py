"""The manifest lists `model/w.bin`, which the run dir does not hold: only A0005 looks for each
listed file."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_json(
        root,
        "manifest.json",
        lambda m: m["artifacts"].update({"model/w.bin": "0" * 64}),
        rehash=False,
    )


MUTATION = mutate
