"""The expected ID list gains `ev-000002` a second time, the claims recomputed from it: only
A0207 reads the list itself for duplicates."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    with open(root / "corpus/expected_ids.txt", "a", encoding="utf-8") as fh:
        fh.write("ev-000002\n")
    rf.recompute_claims(root)


MUTATION = mutate
