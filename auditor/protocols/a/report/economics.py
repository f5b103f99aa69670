"""The report's economics section of protocol A (A9, A10.2): per offer its package price x
lots and its cost per accepted corpus or why not (`facts.economics`), the accepted
configurations fastest first and the others apart, never ranked (`summary.Summary`)."""

from __future__ import annotations

from typing import Any

from auditor.present import NOT_RECORDED
from auditor.protocols.a.economics import usd
from auditor.protocols.a.facts.economics import Economics, OfferCosting
from auditor.protocols.a.summary import Summary


def basis_text(econ: Economics) -> str:
    """What a cost per accepted corpus is divided by, or why there is none."""
    if econ.verdict != "accepted":
        return (
            f"The audit verdict is {econ.verdict}: no accepted count is established, so "
            "only the package cost is given (A9.5)."
        )
    if econ.accepted_corpora is None:
        return "No accepted corpus was measured: only the package cost is given (A9.5)."
    return (
        f"{econ.accepted_corpora} distinct accepted corpus(es) measured in this run "
        "(distinct corpus revisions with an accepted pass; repetitions are not "
        "deliverables, A9.3). Cost per accepted corpus = package total / that count, only "
        "for offers of the hardware the run measured: an accepted count says nothing of "
        "other hardware. No cadence is projected over the package's days (A9.5)."
    )


def measured_on(econ: Economics) -> str:
    """The hardware the run measured, in words."""
    return ", ".join(econ.gpu_models) or "CPU"


def offer_row(o: OfferCosting, econ: Economics) -> dict[str, Any]:
    """One offer costed, as the report shows it."""
    offer, price, per = o.offer, o.offer.get("price_per_lot_usd_minor"), o.per_corpus_usd_minor
    why_not = (
        None
        if per is not None
        else f"not computed: the run measured {measured_on(econ)}"
        if o.why_not == "other hardware"
        else "not costed"
        if o.problem
        else "not computed (no measured accepted count)"
    )
    return {
        "offer_id": o.offer_id,
        "provider": offer.get("provider"),
        "gpu_model": offer.get("gpu_model"),
        "device_class": o.device_class,
        "hardware": o.hardware,
        "gpus_per_lot": offer.get("gpus_per_lot"),
        "duration_days": offer.get("duration_days"),
        "lots": o.lots,
        "example": o.example,
        "price_per_lot_usd_minor": price,
        "price_per_lot_text": usd(price) if isinstance(price, int) else NOT_RECORDED,
        "total_usd_minor": o.total_usd_minor,
        "total_text": usd(o.total_usd_minor) if o.total_usd_minor is not None else "—",
        "per_corpus_usd_minor": float(per) if per is not None else None,
        "per_corpus_text": usd(per) if per is not None else why_not,
        "why_not": o.why_not,
        "measured_here": o.measured_here,
        # A4.2: the lot's price covers every GPU in it, used or not.
        "lot_use": (
            f"The run used {econ.gpus_used} GPU(s); a lot of this offer holds "
            f"{offer.get('gpus_per_lot')} and its price covers all of them (A4.2)."
            if o.gpus_unused
            else None
        ),
        "problem": o.problem,
        "chosen": o.chosen,
    }


def economics_section(s: Summary, offers_label: str) -> dict[str, Any]:
    """The economics of summary S, its offers from OFFERS_LABEL."""
    econ = s.economics
    basis = basis_text(econ)
    rows = [offer_row(o, econ) for o in econ.offers]
    median = {c.config_id: c.median_s for c in s.run.configurations}
    return {
        "intro": (
            "The price compared is the whole package (3, 7 or 30 days) x lots (A9.1); a "
            "B200 lot is two GPUs and its rate covers the lot (A9.2). " + basis
        ),
        "not_accepted_title": (
            "Not accepted (shown apart, never ranked; A10.2)" if s.not_accepted else None
        ),
        "offers_source": offers_label,
        "example_prices": econ.example_prices,
        "chosen_offer": econ.chosen_offer_id,
        "lots": econ.lots,
        "accepted_corpora": econ.accepted_corpora,
        "basis": basis,
        "offers": rows,
        "no_cost_per_corpus": None
        if econ.priced
        else (
            "No offer could be costed."
            if not any(o.total_usd_minor is not None for o in econ.offers)
            else basis
            if econ.verdict != "accepted" or econ.accepted_corpora is None
            else f"No offer is for the hardware the run measured ({measured_on(econ)})."
        ),
        "accepted_configurations": [
            {"rank": i + 1, "variant_id": v, "median_warm_s": median.get(v)}
            for i, v in enumerate(s.fastest_first)
        ],
        "not_accepted_configurations": [
            {
                "variant_id": v,
                "median_warm_s": median.get(v),
                "why": "a pass was not accepted"
                if econ.verdict == "accepted"
                else f"the run is {econ.verdict}",
            }
            for v in s.not_accepted
        ],
    }
