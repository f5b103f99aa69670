"""batch-1's rows count 5 accepted corpora (re-hashed): more than the run accepted, which only
A0903 recounts."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(
        root,
        lambda rows: [
            r.update(accepted_unique_corpora="5") for r in rows if r["variant_id"] == "batch-1"
        ],
    )


MUTATION = mutate
