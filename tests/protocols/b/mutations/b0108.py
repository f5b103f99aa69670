"""The synthetic run's tokenizer.json is replaced after the run (a file of the run dir,
re-sealed), its revision left as the run recorded it: only B0108 compares a revision with
the file its kind names."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    (root / "model/tokenizer.json").write_text(
        '{"version": "1.0", "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "invoice": 1}}}\n',
        encoding="utf-8",
    )
    br.rehash(root)


MUTATION = mutate
