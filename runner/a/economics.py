"""The offer a run compares (A9): read and checked before anything is measured.

The package total is the whole package price (3, 7 or 30 days) per lot times the lots, the
same on every row and never summed over passes (A9.1, A9.3). A lot's price covers the lot
(for B200 a lot holds two GPUs, A9.2). An offer quoted per GPU (`price_basis: "gpu"`) or an
offer id the file does not hold stops the run: the runner refuses to guess.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import schemas
from runner.errors import RunnerError


@dataclass(frozen=True)
class ChosenOffer:
    offers_file: Path
    offers_bytes: bytes
    offer: dict[str, Any]
    lots: int

    @property
    def duration_days(self) -> int:
        return int(self.offer["duration_days"])

    @property
    def package_total_usd_minor(self) -> int:
        return int(self.offer["price_per_lot_usd_minor"]) * self.lots


def choose_offer(offers_file: Path, offer_id: str, lots: int) -> ChosenOffer:
    if not offers_file.is_file():
        raise RunnerError(f"offers file {offers_file}: not found")
    data = offers_file.read_bytes()
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RunnerError(f"offers file {offers_file}: not valid JSON ({exc})") from None
    errors = sorted(schemas.validator("offers").iter_errors(doc), key=lambda e: e.path)
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(top level)"
        raise RunnerError(f"offers file {offers_file}: {where}: {errors[0].message}")
    matches = [o for o in doc["offers"] if o["offer_id"] == offer_id]
    if not matches:
        known = ", ".join(o["offer_id"] for o in doc["offers"])
        raise RunnerError(
            f"offers file {offers_file}: unknown offer {offer_id!r} (the file holds: {known})"
        )
    if len(matches) > 1:
        raise RunnerError(
            f"offers file {offers_file}: offer {offer_id!r} appears {len(matches)} times"
        )
    offer = matches[0]
    if offer["price_basis"] != "lot":
        raise RunnerError(
            f"offers file {offers_file}: offer {offer_id!r} is priced per GPU "
            '(price_basis "gpu"); the package calculation needs the price of '
            "the whole lot (A9.1, A9.2) and will not guess it"
        )
    return ChosenOffer(offers_file, data, offer, lots)
