"""The archived set check says pass 0 is missing `ev-000001` (re-hashed): the runner's own check
is not the auditor's recomputation, which only A0206 compares with it."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_json(
        root, "checks/set-check.json", lambda s: rf.set_at(s, "passes/0/missing_ids", ["ev-000001"])
    )


MUTATION = mutate
