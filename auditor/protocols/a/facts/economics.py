"""What the run's offers cost (A9, A10.2), from the package math of
`auditor/protocols/a/economics.py` and the audit's own counts: the offer the manifest
chooses, and per offer its package total, and its cost per accepted corpus or why not: only
from the accepted count the audit recomputed, only when the audit accepts the run, and only
for offers of the hardware the run measured."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from auditor.protocols.a.economics import (
    PackageCost,
    device_class,
    hardware_text,
    offer_problem,
    package_total,
    same_gpu,
)
from auditor.protocols.a.facts.gpus import gpu_models, gpus_used, pass_gpus
from auditor.protocols.a.facts.passes import accepted_corpora
from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView


@per_view
def chosen_offer(view: RunView) -> tuple[int, dict] | None:
    """(index in the offers file, offer) of the offer the manifest names; None when it
    names none or one the offers file lacks (A0901 reports that)."""
    econ = view.manifest.get("economics") if view.manifest else None
    if not econ or view.offers is None:
        return None
    for n, o in enumerate(view.offers["offers"]):
        if o["offer_id"] == econ["offer_id"]:
            return n, o
    return None


def same_hardware(offer: Mapping[str, Any], view: RunView) -> bool:
    """Whether OFFER rents the hardware the run measured. A GPU offer: every word of its
    model is in a name the driver reported ("H100 80GB" matches "NVIDIA H100 80GB HBM3"). A
    CPU offer: the placement evidence shows passes that used no GPU at all."""
    if device_class(dict(offer)) == "cpu":
        return pass_gpus(view).height > 0 and gpus_used(view) == 0
    return same_gpu(offer.get("gpu_model"), gpu_models(view))


def why_not_word(
    problem: str | None, verdict: str, accepted: int | None, same_hw: bool
) -> str | None:
    """Why an offer has no cost per accepted corpus, in a word or two (None: it has one)."""
    if problem is not None:
        return "per-GPU quote" if "per GPU" in problem else "lot mismatch"
    if verdict != "accepted":
        return f"run {verdict}"
    if not accepted:
        return "none accepted"
    return None if same_hw else "other hardware"


@dataclass(frozen=True)
class OfferCosting:
    """One offer of an offers file, costed against the run."""

    offer: Mapping[str, Any]
    """The offer as the file has it."""
    lots: int
    example: bool
    """An example price (the offer's or the whole file's flag), not a quote."""
    problem: str | None
    """Why it cannot be costed at all (`economics.offer_problem`), or None."""
    total_usd_minor: int | None
    """The package total (A9.1); None when it cannot be costed."""
    per_corpus_usd_minor: Decimal | None
    """The package total per accepted corpus; None with `why_not`."""
    why_not: str | None
    """Why it has no cost per accepted corpus, in a word or two (`why_not_word`)."""
    measured_here: bool
    """Whether it rents the hardware the run measured (`same_hardware`)."""
    gpus_unused: bool
    """Of the hardware measured, with more GPUs per lot than the run used: its price
    covers them all (A4.2)."""
    chosen: bool
    """The offer the manifest names."""

    @property
    def offer_id(self) -> Any:
        return self.offer.get("offer_id")

    @property
    def device_class(self) -> str:
        return device_class(dict(self.offer))

    @property
    def hardware(self) -> str:
        return hardware_text(dict(self.offer))


@dataclass(frozen=True)
class Economics:
    """The offers of a run costed by the audit (A9): the manifest's lots and choice, the
    accepted count the costs divide by, and each offer."""

    verdict: str
    """The audit's verdict the costs were computed under."""
    lots: int
    chosen_offer_id: Any
    accepted_corpora: int | None
    """Distinct accepted corpora; None when the run is not accepted or none is."""
    gpu_models: tuple[str, ...]
    """The GPU models the run measured, sorted (empty: CPU only)."""
    gpus_used: int
    example_prices: bool
    """The offers file or one of its offers gives example prices."""
    offers: tuple[OfferCosting, ...]

    @property
    def priced(self) -> tuple[OfferCosting, ...]:
        """The offers with a cost per accepted corpus."""
        return tuple(o for o in self.offers if o.per_corpus_usd_minor is not None)


def economics(view: RunView, offers: Mapping[str, Any] | None, verdict: str) -> Economics:
    """OFFERS (the run's own, or those given to the report) costed against the run audited
    with VERDICT. Not cached per view: the offers and the verdict are the caller's."""
    econ = (view.manifest or {}).get("economics") or {}
    lots = got if isinstance(got := econ.get("lots"), int) else 1
    corpora = (accepted_corpora(view) or None) if verdict == "accepted" else None
    used = gpus_used(view)
    rows = []
    for o in (offers or {}).get("offers") or []:
        if not isinstance(o, Mapping):
            continue
        problem = offer_problem(dict(o))
        price = o.get("price_per_lot_usd_minor")
        total = package_total(dict(o), lots) if isinstance(price, int) and problem is None else None
        same_hw = same_hardware(o, view)
        word = why_not_word(problem, verdict, corpora, same_hw)
        per = (
            PackageCost(dict(o), lots, total, corpora).per_corpus_usd_minor
            if total is not None and word is None
            else None
        )
        rows.append(
            OfferCosting(
                offer=o,
                lots=lots,
                example=bool(o.get("example") or (offers or {}).get("example")),
                problem=problem,
                total_usd_minor=total,
                per_corpus_usd_minor=per,
                why_not=word,
                measured_here=same_hw,
                gpus_unused=(
                    same_hw
                    and isinstance(o.get("gpus_per_lot"), int)
                    and 0 < used < o["gpus_per_lot"]
                ),
                chosen=o.get("offer_id") == econ.get("offer_id"),
            )
        )
    return Economics(
        verdict=verdict,
        lots=lots,
        chosen_offer_id=econ.get("offer_id"),
        accepted_corpora=corpora,
        gpu_models=tuple(sorted(gpu_models(view))),
        gpus_used=used,
        example_prices=bool((offers or {}).get("example")) or any(r.example for r in rows),
        offers=tuple(rows),
    )
