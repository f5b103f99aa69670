"""corpus/references.jsonl loses its first line, the claims recomputed: an expected ID without a
reference, which only A0208 checks."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.write_jsonl(
        root, "corpus/references.jsonl", rf.read_jsonl(root, "corpus/references.jsonl")[1:]
    )
    rf.recompute_claims(root)


MUTATION = mutate
