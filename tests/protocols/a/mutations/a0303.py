"""Every batch-4 output file lists its lines in reverse order, the claims recomputed: the same
IDs in another input order than batch-1's, which only A0303 compares."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    for p in sorted((root / "outputs/batch-4").glob("*.jsonl")):
        rel = p.relative_to(root).as_posix()
        rf.edit_output(root, rel, lambda lines: lines[::-1])
    rf.recompute_claims(root)


MUTATION = mutate
