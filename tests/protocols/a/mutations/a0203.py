"""Line 8 of batch-1's warm-2 output gets the label `Positive`, not a declared class, the row
still claiming `format_valid` and `corpus_accepted` (other claims recomputed): only A0203
validates each line."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

from ._helpers import keep_claims

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_output(
        root, "outputs/batch-1/warm-2.jsonl", lambda lines: lines[7].update(label="Positive")
    )
    keep_claims(root, "batch-1", "warm", 2, "format_valid", "corpus_accepted")


MUTATION = mutate
