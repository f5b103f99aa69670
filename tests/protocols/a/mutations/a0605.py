"""batch-4's cold-1 row and its files are removed, the claims recomputed, its timeline entry
kept: a pass that ran and was dropped without a word, which only A0605 sees (the entry keeps
A0007 quiet)."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rows = rf.read_rows(root)
    rows.remove(rf.pass_row(rows, "batch-4", "cold", 1))
    rf.write_rows(root, rows)
    for rel in (
        "outputs/batch-4/cold-1.jsonl",
        "traces/memory/batch-4/cold-1.json",
        "evidence/placement/batch-4/cold-1.json",
    ):
        (root / rel).unlink()
    rf.recompute_claims(root)


MUTATION = mutate
