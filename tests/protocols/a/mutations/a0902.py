"""Row 3's package total is five times its cost (re-hashed): a cost accumulated over passes,
which only A0902 recomputes."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_rows(
        root,
        lambda rows: rows[2].update(
            package_total_usd_minor=str(5 * int(rows[2]["package_total_usd_minor"]))
        ),
    )


MUTATION = mutate
