"""Every label of batch-1's warm-2 output becomes `negative`, the row still claiming
`corpus_accepted` while its quality value is recomputed: only A0204 holds the recomputed metric
against the quality rule."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

from ._helpers import keep_claims

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_output(
        root,
        "outputs/batch-1/warm-2.jsonl",
        lambda lines: [dict(x, label="negative") for x in lines],
    )
    keep_claims(root, "batch-1", "warm", 2, "corpus_accepted")


MUTATION = mutate
