"""batch-4's cold-1 placement evidence takes the `pid` of batch-1's cold-1 (re-hashed): the
evidence was written by another process than the one the timeline says ran the pass, which only
A0105 checks."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_json(
        root,
        "evidence/placement/batch-4/cold-1.json",
        lambda d: rf.set_at(
            d, "pid", rf.read_json(root, "evidence/placement/batch-1/cold-1.json")["pid"]
        ),
    )


MUTATION = mutate
