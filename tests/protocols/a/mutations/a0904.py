"""A typed projection claims 4,000 corpora a week from one accepted corpus: only A0904 reads
projected cadences."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_claims

TEMPLATE = "cpu+claims"


def mutate(root: Path) -> None:
    edit_claims(
        root,
        lambda c: c["projections"].append(
            {
                "figure": "corpora_per_period",
                "variant_id": "batch-1",
                "value": 4000,
                "unit": "corpora",
                "period_days": 7,
                "accepted_corpora": 1,
            }
        ),
    )


MUTATION = mutate
