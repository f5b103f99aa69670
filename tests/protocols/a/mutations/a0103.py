"""The tune split gains `ev-000003`, an evaluation ID (re-hashed): the splits intersect, which
only A0103 checks."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    with open(root / "corpus/splits/tune_ids.txt", "a", encoding="utf-8") as fh:
        fh.write("ev-000003\n")
    rf.rehash(root)


MUTATION = mutate
