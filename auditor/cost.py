"""`audit cost`: the package calculation (`auditor.protocols.a.economics`) for one offer of
an offers file, rendered as text or JSON. This module only renders; the arithmetic is
`economics.package_cost`'s."""

from __future__ import annotations

import json
from pathlib import Path

from auditor.errors import AuditorError
from auditor.protocols.a.economics import load_offers, package_cost, parse_count, usd


def cost_command(offers_file: Path, offer_id: str, lots: str, accepted_results: str | None,
                 fmt: str) -> str:
    """What `audit cost` prints."""
    n_lots = parse_count(lots, "--lots", allow_zero=False)
    n_acc = (None if accepted_results is None
             else parse_count(accepted_results, "--accepted-results", allow_zero=True))
    data = load_offers(offers_file)
    by_id = {o["offer_id"]: o for o in data["offers"]}
    if offer_id not in by_id:
        raise AuditorError(f"{offers_file}: no offer {offer_id!r}; known offers: "
                           + ", ".join(sorted(by_id)))
    offer = by_id[offer_id]
    try:
        pc = package_cost(offer, n_lots, n_acc)
    except AuditorError as exc:
        raise AuditorError(f"{offers_file}: {exc}") from None
    example = bool(data.get("example") or offer.get("example"))
    per = pc.per_corpus_usd_minor
    if fmt == "json":
        return json.dumps({
            "offer_id": offer_id,
            "gpu_model": offer["gpu_model"],
            "gpus_per_lot": offer["gpus_per_lot"],
            "duration_days": offer["duration_days"],
            "price_per_lot_usd_minor": offer["price_per_lot_usd_minor"],
            "lots": n_lots,
            "package_total_usd_minor": pc.total_usd_minor,
            "accepted_results": n_acc,
            "cost_per_accepted_corpus_usd_minor": None if per is None else str(per),
            "example_prices": example,
            "note": _note(n_acc),
        }, indent=2)
    lines = [
        f"offer            {offer_id} ({offer.get('provider', 'provider not named')}, "
        f"{offer['gpu_model']}, {offer['gpus_per_lot']} GPU(s) per lot, "
        f"{offer['duration_days']}-day package)",
        f"price per lot    {usd(offer['price_per_lot_usd_minor'])} "
        f"({offer['price_per_lot_usd_minor']} cents)",
        f"lots             {n_lots}",
        f"package total    {usd(pc.total_usd_minor)} ({pc.total_usd_minor} cents)"
        " = price per lot x lots",
    ]
    if per is not None:
        lines.append(f"cost per accepted corpus  {usd(per)} ({per} cents) = package total / "
                     f"{n_acc} accepted corpora")
    lines.append(_note(n_acc))
    if example:
        lines.append("prices in this offers file are examples, not quotes")
    return "\n".join(lines)


def _note(n_acc: int | None) -> str:
    if n_acc is None:
        return ("no measured accepted count given: only the package cost is computed "
                "(A9.5); no cadence is projected")
    if n_acc == 0:
        return ("0 accepted corpora: no cost per accepted corpus can be computed; "
                "only the package cost (A9.5)")
    return ("accepted corpora are distinct corpora validated in the period, not "
            "repetitions (A9.3); no cadence is projected")
