"""The package calculation of protocol A (A9): the one place the auditor derives a package
total and a cost per accepted corpus (rules, the report, `audit cost` and archives call it).

- A9.1 the price compared is the whole package (3, 7 or 30 days) x the number of lots;
- A9.2 a B200 lot holds two GPUs and its rate covers the lot: a per-GPU quote is refused
  rather than guessed into a lot price;
- A9.3 accepted results = distinct corpora validated in the period, never repetitions;
- A9.5 without a measured accepted count only the package cost is given, and no cadence is
  ever projected over the package's days.

Money stays in integer USD cents; a cost per accepted corpus that does not divide evenly is
shown to a hundredth of a cent (Decimal, half-even), never through floats.
"""

from __future__ import annotations

import json
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

import schemas
from auditor.errors import AuditorError

B200_GPUS_PER_LOT = schemas.convention("A", "b200_gpus_per_lot")
_UINT = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class PackageCost:
    offer: dict[str, Any]
    lots: int
    total_usd_minor: int
    accepted_results: int | None
    """None: no measured accepted count was given, only the package cost is known."""

    @property
    def per_corpus_usd_minor(self) -> Decimal | None:
        if not self.accepted_results:
            return None
        return (Decimal(self.total_usd_minor) / Decimal(self.accepted_results)).quantize(
            Decimal("0.01"), rounding=ROUND_HALF_EVEN
        )


def usd(cents: int | Decimal) -> str:
    """`123456` -> `$1,234.56`; a fractional-cent Decimal keeps its hundredths of a cent."""
    d = Decimal(cents) / 100
    places = Decimal("0.01") if d == d.quantize(Decimal("0.01")) else Decimal("0.0001")
    return f"${d.quantize(places, rounding=ROUND_HALF_EVEN):,}"


def device_class(offer: dict[str, Any]) -> str:
    """`gpu` (the default) or `cpu`: what a lot of OFFER rents."""
    return "cpu" if offer.get("device_class") == "cpu" else "gpu"


def hardware_text(offer: dict[str, Any]) -> str:
    """What one lot of OFFER holds, in a few words."""
    if device_class(offer) == "cpu":
        return "CPU only" + (f" ({offer['machine']})" if offer.get("machine") else "")
    n = offer.get("gpus_per_lot")
    return f"{n} x {offer.get('gpu_model')}" + (
        f" ({offer['machine']})" if offer.get("machine") else ""
    )


def is_b200(offer: dict[str, Any]) -> bool:
    return "B200" in str(offer.get("gpu_model", "")).upper()


def _gpu_words(name: Any) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", str(name or "").casefold())) - {"nvidia", "amd"}


def same_gpu(offer_gpu: Any, measured: AbstractSet[str]) -> bool:
    """Whether an offer's GPU is one the run measured: every word of the offer's model is in
    the name the driver reported ("H100 80GB" matches "NVIDIA H100 80GB HBM3")."""
    words = _gpu_words(offer_gpu)
    return bool(words) and any(words <= _gpu_words(m) for m in measured)


def offer_problem(offer: dict[str, Any]) -> str | None:
    """Why this offer cannot be costed (A9.1/A9.2), or None."""
    oid = offer.get("offer_id")
    if offer.get("price_basis") != "lot":
        return (
            f"offer {oid!r} is priced per GPU (price_basis {offer.get('price_basis')!r}); "
            "A9 compares whole lots: quote the price of the lot"
            + (" (a B200 lot is two GPUs and its rate covers the lot)" if is_b200(offer) else "")
        )
    if is_b200(offer) and offer.get("gpus_per_lot") != B200_GPUS_PER_LOT:
        return (
            f"offer {oid!r}: a B200 lot holds {B200_GPUS_PER_LOT} GPUs (A9.2), "
            f"this offer says gpus_per_lot = {offer.get('gpus_per_lot')}"
        )
    return None


def load_offers(path: Path) -> dict[str, Any]:
    """The parsed offers file, validated against schemas/offers.schema.json."""
    import schemas

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise AuditorError(f"{path}: cannot be read ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AuditorError(f"{path}: not valid JSON ({exc})") from None
    errors = sorted(schemas.validator("offers").iter_errors(data), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = "/" + "/".join(str(p) for p in e.absolute_path)
        raise AuditorError(f"{path}: does not match offers.schema.json at {where}: {e.message}")
    return data


def parse_count(value: int | str, what: str, *, allow_zero: bool) -> int:
    text = str(value).strip()
    if not _UINT.fullmatch(text):
        raise AuditorError(
            f"{what} must be a {'non-negative' if allow_zero else 'positive'} "
            f"whole number, got {value!r}"
        )
    n = int(text)
    if n == 0 and not allow_zero:
        raise AuditorError(f"{what} must be a positive whole number, got {value!r}")
    return n


def package_total(offer: dict[str, Any], lots: int) -> int:
    """A9.1: the whole package's price per lot times the lots billed, in cents."""
    return int(offer["price_per_lot_usd_minor"]) * lots


def package_cost(offer: dict[str, Any], lots: int, accepted_results: int | None) -> PackageCost:
    """The package cost of LOTS lots of OFFER, and per accepted corpus when a measured count
    is given; raises `AuditorError` for an offer that cannot be costed (A9.2)."""
    problem = offer_problem(offer)
    if problem:
        raise AuditorError(problem)
    return PackageCost(offer, lots, package_total(offer, lots), accepted_results)
