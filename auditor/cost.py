"""`audit cost`: the package calculation (`auditor.protocols.a.economics`) for one offer of an
offers file, or every offer of it in one table, as text or JSON
(`schemas/cost-result.schema.json`). This module only arranges and renders; the arithmetic is
`economics.package_cost`'s.

In JSON, money is integer USD cents and every field has one type: a field that does not apply
(no cost per corpus without an accepted count) is absent, never null.
"""

from __future__ import annotations

import json
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

from auditor.errors import AuditorError
from auditor.protocols.a.economics import (
    hardware_text,
    load_offers,
    offer_problem,
    package_cost,
    parse_count,
    usd,
)

SCHEMA_VERSION = "1"


def _cents(value: Decimal) -> int:
    """A cost in cents, rounded half-even to the cent (the text shows hundredths of a cent)."""
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def offer_cost(offer: dict[str, Any], lots: int, accepted: int | None) -> dict[str, Any]:
    """One offer's entry of the result: its package total and cost per accepted corpus, or
    why it cannot be costed."""
    entry: dict[str, Any] = {
        "offer_id": offer["offer_id"],
        **({"provider": offer["provider"]} if offer.get("provider") else {}),
        "gpu_model": offer["gpu_model"],
        "device_class": offer.get("device_class", "gpu"),
        **({"machine": offer["machine"]} if offer.get("machine") else {}),
        "gpus_per_lot": offer["gpus_per_lot"],
        "duration_days": offer["duration_days"],
        "price_per_lot_usd_minor": offer["price_per_lot_usd_minor"],
        "lots": lots,
        "example": bool(offer.get("example")),
    }
    problem = offer_problem(offer)
    if problem is not None:
        return {**entry, "costed": False, "why_not": problem}
    pc = package_cost(offer, lots, accepted)
    per = pc.per_corpus_usd_minor
    entry.update(costed=True, package_total_usd_minor=pc.total_usd_minor)
    if per is not None:
        entry["cost_per_accepted_corpus_usd_minor"] = _cents(per)
        entry["cost_per_accepted_corpus_text"] = usd(per)
    return entry


def cost_result(
    offers_file: Path, offer_id: str | None, lots: int | str, accepted_results: int | str | None
) -> dict[str, Any]:
    """What `audit cost` computes, as the JSON document it prints. With OFFER_ID, that offer
    alone, and an offer that cannot be costed is an error; without, every offer of the file."""
    n_lots = parse_count(lots, "--lots", allow_zero=False)
    n_acc = (
        None
        if accepted_results is None
        else parse_count(accepted_results, "--accepted-results", allow_zero=True)
    )
    data = load_offers(offers_file)
    offers = data["offers"]
    if offer_id is not None:
        offers = [o for o in offers if o["offer_id"] == offer_id]
        if not offers:
            raise AuditorError(
                f"{offers_file}: no offer {offer_id!r}; known offers: "
                + ", ".join(sorted(o["offer_id"] for o in data["offers"]))
            )
        problem = offer_problem(offers[0])
        if problem:
            raise AuditorError(f"{offers_file}: {problem}")
    return {
        "schema_version": SCHEMA_VERSION,
        "offers_file": str(offers_file),
        "example_prices": bool(data.get("example") or any(o.get("example") for o in offers)),
        "lots": n_lots,
        **({"accepted_results": n_acc} if n_acc is not None else {}),
        "note": _note(n_acc),
        "offers": [offer_cost(o, n_lots, n_acc) for o in offers],
    }


def cost_command(
    offers_file: Path,
    offer_id: str | None,
    lots: int | str,
    accepted_results: int | str | None,
    fmt: str,
) -> str:
    """What `audit cost` prints."""
    result = cost_result(offers_file, offer_id, lots, accepted_results)
    if fmt == "json":
        return json.dumps(result, indent=2)
    return detail_text(result) if offer_id is not None else table_text(result)


def detail_text(result: dict[str, Any]) -> str:
    """One offer, line by line, with the arithmetic spelled out."""
    (o,) = result["offers"]
    lines = [
        f"offer            {o['offer_id']} ({o.get('provider', 'provider not named')}, "
        f"{hardware_text(o)}, {o['duration_days']}-day package)",
        f"price per lot    {usd(o['price_per_lot_usd_minor'])} "
        f"({o['price_per_lot_usd_minor']} cents)",
        f"lots             {o['lots']}",
        f"package total    {usd(o['package_total_usd_minor'])} "
        f"({o['package_total_usd_minor']} cents) = price per lot x lots",
    ]
    if "cost_per_accepted_corpus_usd_minor" in o:
        lines.append(
            f"cost per accepted corpus  {o['cost_per_accepted_corpus_text']} = package "
            f"total / {result['accepted_results']} accepted corpora"
        )
    lines.append(result["note"])
    if result["example_prices"]:
        lines.append("prices in this offers file are examples, not quotes")
    return "\n".join(lines)


def table_text(result: dict[str, Any]) -> str:
    """Every offer in one aligned table; an offer that cannot be costed says why."""
    head = (
        "offer",
        "hardware",
        "days",
        "price per lot",
        "lots",
        "package total",
        "per accepted corpus",
    )
    rows = []
    for o in result["offers"]:
        cells = [
            o["offer_id"],
            hardware_text(o),
            str(o["duration_days"]),
            usd(o["price_per_lot_usd_minor"]),
            str(o["lots"]),
        ]
        if o["costed"]:
            cells += [
                usd(o["package_total_usd_minor"]),
                o.get("cost_per_accepted_corpus_text", "not computed"),
            ]
        else:
            cells += ["not costed", o["why_not"]]
        rows.append(cells)
    right = {2, 3, 4, 5}
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head) - 1)]

    def line(cells: tuple[str, ...] | list[str]) -> str:
        out = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=False))
        ]
        return "  ".join([*out, cells[-1]]).rstrip()

    text = [
        f"offers: {result['offers_file']}"
        + (" (example figures, not quotes)" if result["example_prices"] else ""),
        f"lots: {result['lots']}; accepted corpora: "
        + (str(result["accepted_results"]) if "accepted_results" in result else "not given"),
        "",
        line(head),
        *(line(r) for r in rows),
        "",
        result["note"],
    ]
    return "\n".join(text)


def _note(n_acc: int | None) -> str:
    if n_acc is None:
        return (
            "no measured accepted count given: only the package cost is computed "
            "(A9.5); no cadence is projected"
        )
    if n_acc == 0:
        return (
            "0 accepted corpora: no cost per accepted corpus can be computed; "
            "only the package cost (A9.5)"
        )
    return (
        "accepted corpora are distinct corpora validated in the period, not "
        "repetitions (A9.3); no cadence is projected"
    )
