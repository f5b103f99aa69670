"""batch-1's warm-2 output answers line 5's ID again on line 6 (one ID twice, one missing), the
row still claiming `ids_match` and `corpus_accepted`; its other claims are recomputed, so only
A0201, which counts each expected ID in the file, contradicts the row."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

from ._helpers import keep_claims

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    def dup(lines: list[dict]) -> None:
        lines[5]["id"] = lines[4]["id"]

    rf.edit_output(root, "outputs/batch-1/warm-2.jsonl", dup)
    keep_claims(root, "batch-1", "warm", 2, "ids_match", "corpus_accepted")


MUTATION = mutate
