"""The first offer's price per lot becomes 99999 (re-hashed): the package total is no longer
price times lots, which only A0901 recomputes."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_json(
        root,
        "economics/offers.json",
        lambda o: rf.set_at(o, "offers/0/price_per_lot_usd_minor", 99999),
    )


MUTATION = mutate
