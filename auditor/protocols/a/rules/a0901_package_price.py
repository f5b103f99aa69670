"""A0901: the package total is the offer's whole-package price times the lots.

What it checks: rows that state a package total name an offer in the manifest (without one
the total cannot be checked: missing evidence); the manifest's offer exists in the offers
file and is priced per lot, a B200 lot holding two GPUs; the
rows' `duration_days` is the offer's, `lots` the manifest's, and `package_total_usd_minor`
(of the first row; A0902 holds the others to it) equals `price_per_lot_usd_minor` x `lots`;
what the manifest restates of the offer (`economics.duration_days`, `gpu_model`,
`package_total_usd_minor`, when given) is the offer's.
Reads: manifest `/economics`; offers `offer_id`, `price_basis`, `gpus_per_lot`, `duration_days`,
`price_per_lot_usd_minor`, `gpu_model`; CSV `duration_days`, `lots`,
`package_total_usd_minor`.
Why it matters: A9.1 and A9.2: the price compared is the whole 3-, 7- or 30-day package times
the lots billed; for B200 a lot holds two GPUs and the rate already covers the lot, so
multiplying it by the GPU count doubles the cost.
Example: offer b200-7d at 250000 cents per lot, 1 lot, and a row claiming 500000.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import MANIFEST, RESULTS
from auditor.protocols.a.economics import B200_GPUS_PER_LOT, is_b200, package_total
from auditor.protocols.a.facts.economics import chosen_offer
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0901",
    title="package total = price x lots",
    protocol_ref="A9.1",
    severity="error",
    requires=("manifest", "results", "offers"),
    fix="Write the package total as price per lot x lots of a lot-priced offer.",
)
def check(view: RunView) -> Iterator[Finding]:
    econ = view.manifest.get("economics")
    if not econ:
        priced = view.results.filter(pl.col("package_total_usd_minor").is_not_null())
        for row, got in priced.select("row", "package_total_usd_minor").head(1).iter_rows():
            yield RULE.finding(
                "the rows state a package total but the manifest names no "
                "offer it could be checked against",
                artifact=RESULTS,
                row=row,
                observed=got,
                expected="an offer named in manifest /economics, or an empty cell",
                missing_evidence=True,
                evidence={"field": "package_total_usd_minor"},
            )
        return
    chosen = chosen_offer(view)
    if chosen is None:
        yield RULE.finding(
            f"offer {econ['offer_id']} is not in {view.offers_path}",
            artifact=MANIFEST,
            pointer="/economics/offer_id",
            observed=econ["offer_id"],
            expected=sorted(o["offer_id"] for o in view.offers["offers"]),
        )
        return
    n, offer = chosen
    if offer["price_basis"] != "lot":
        yield RULE.finding(
            "the offer is priced per GPU; a package is priced per lot",
            artifact=view.offers_path,
            pointer=f"/offers/{n}/price_basis",
            observed=offer["price_basis"],
            expected="lot",
            protocol_ref="A9.2",
        )
    elif is_b200(offer) and offer["gpus_per_lot"] != B200_GPUS_PER_LOT:
        yield RULE.finding(
            f"a B200 lot holds {B200_GPUS_PER_LOT} GPUs and its rate covers the "
            f"lot; offer {offer['offer_id']} counts {offer['gpus_per_lot']}",
            artifact=view.offers_path,
            pointer=f"/offers/{n}/gpus_per_lot",
            observed=offer["gpus_per_lot"],
            expected=B200_GPUS_PER_LOT,
            protocol_ref="A9.2",
        )
    total = package_total(offer, econ["lots"])
    r = view.results
    for col, want in (("duration_days", offer["duration_days"]), ("lots", econ["lots"])):
        for row, got in (
            r.filter((pl.col(col) != want).fill_null(True)).select("row", col).iter_rows()
        ):
            yield RULE.finding(
                f"{col} differs from the package the manifest names",
                artifact=RESULTS,
                row=row,
                observed=got,
                expected=want,
                evidence={"field": col},
            )
    # What the manifest restates of the offer (the runner writes these) is the offer's.
    for key, want in (
        ("duration_days", offer["duration_days"]),
        ("gpu_model", offer["gpu_model"]),
        ("package_total_usd_minor", total),
    ):
        if key in econ and econ[key] != want:
            yield RULE.finding(
                f"economics.{key} differs from offer {offer['offer_id']}",
                artifact=MANIFEST,
                pointer=f"/economics/{key}",
                observed=econ[key],
                expected=want,
            )
    first = r.sort("row").row(0, named=True) if r.height else None
    if first is not None and first["package_total_usd_minor"] != total:
        yield RULE.finding(
            "package_total_usd_minor is not the package price x lots",
            artifact=RESULTS,
            row=first["row"],
            observed=first["package_total_usd_minor"],
            expected=total,
            evidence={
                "price_per_lot": offer["price_per_lot_usd_minor"],
                "lots": econ["lots"],
                "gpus_per_lot": offer["gpus_per_lot"],
            },
        )


RULE = check
