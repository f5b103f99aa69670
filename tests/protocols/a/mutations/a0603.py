"""Row 6's duration becomes 5 ms shorter than its timeline entry's, within the full-chain
window's slack so A0501 is quiet (re-hashed): only A0603 compares the row's duration with the
timeline's."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(
        root,
        lambda rows: rows[5].update(
            elapsed_seconds=str(round(float(rows[5]["elapsed_seconds"]) - 0.005, 6))
        ),
    )


MUTATION = mutate
