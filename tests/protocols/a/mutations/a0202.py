"""batch-1's warm-2 output gains a line for `tu-00001`, a tune ID no evaluation expects, the row
still claiming `ids_match` and `corpus_accepted` (other claims recomputed): only A0202 looks for
extra IDs."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

from ._helpers import keep_claims

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_output(
        root,
        "outputs/batch-1/warm-2.jsonl",
        lambda lines: [*lines, {"id": "tu-00001", "label": "neutral"}],
    )
    keep_claims(root, "batch-1", "warm", 2, "ids_match", "corpus_accepted")


MUTATION = mutate
