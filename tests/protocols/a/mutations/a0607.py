"""batch-4's warm-2 timeline entry is removed (re-hashed): a row without its timeline entry,
which only A0607 pairs."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_timeline(
        root,
        lambda t: t.remove(
            next(
                x
                for x in t
                if (x["variant_id"], x["phase"], x["run_index"]) == ("batch-4", "warm", 2)
            )
        ),
    )


MUTATION = mutate
