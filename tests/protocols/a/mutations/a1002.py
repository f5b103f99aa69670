"""Every label of batch-4's outputs becomes `negative`, the CSV saying honestly that batch-4 is
not accepted, while the typed ranking lists it first: only A1002 ranks against the recomputed
acceptance."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

from ._helpers import edit_claims

TEMPLATE = "cpu+claims"


def mutate(root: Path) -> None:
    for p in sorted((root / "outputs/batch-4").glob("*.jsonl")):
        rf.edit_output(
            root,
            p.relative_to(root).as_posix(),
            lambda lines: [dict(x, label="negative") for x in lines],
        )
    rf.recompute_claims(root)  # the CSV says honestly that batch-4 is not accepted...
    edit_claims(
        root,
        lambda c: c["rankings"][0].update(  # ... and the ranking lists it
            variants=["batch-4", "batch-1"]
        ),
    )


MUTATION = mutate
