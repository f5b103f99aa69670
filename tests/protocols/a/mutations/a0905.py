"""batch-4's rows count 29 expected IDs, not the expected list's (re-hashed): only A0905
compares the unit of work."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(
        root,
        lambda rows: [r.update(expected_ids="29") for r in rows if r["variant_id"] == "batch-4"],
    )


MUTATION = mutate
