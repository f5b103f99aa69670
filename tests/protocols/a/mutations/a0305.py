"""The evaluation inputs file loses its last text (re-hashed): only A0305 compares the inputs
with the expected IDs."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.write_jsonl(
        root, "corpus/eval-inputs.jsonl", rf.read_jsonl(root, "corpus/eval-inputs.jsonl")[:-1]
    )
    rf.rehash(root)


MUTATION = mutate
