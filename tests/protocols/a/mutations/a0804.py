"""Row 2's duration is written with a decimal comma (re-hashed): only A0804 looks for decimal
commas."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(
        root,
        lambda rows: rows[1].update(elapsed_seconds=rows[1]["elapsed_seconds"].replace(".", ",")),
    )


MUTATION = mutate
