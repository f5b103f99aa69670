"""A0904: no cadence is projected, and no figure over the package's days without a measured
accepted count.

What it checks: each typed projection of `claims.json` (`projections`: corpora per period, a
cadence, a cost per accepted corpus) rests on a measured count of distinct accepted corpora
(`accepted_corpora` not null nor 0) that is no more than the auditor recomputes (for its
variant, or for the run); a count of corpora per period or a cadence never states more
corpora than that; and a cost per accepted corpus is the package total (the manifest's offer
x lots) over the accepted corpora it rests on, in `usd_minor` (to the cent) or `usd`. A note
that speaks of a rate per day, a projection or an extrapolation gets a warning quoting the
sentence, never an error. When the CSV or the outputs did not load, only the first check
runs: the count cannot be recomputed, and their own findings say why.
Reads: claims `/projections` (`figure`, `variant_id`, `value`, `unit`, `accepted_corpora`);
manifest `/economics`; offers `price_per_lot_usd_minor`; the
output files, references and expected IDs (accepted corpora recomputed); CSV
`corpus_revision`; notes (CSV `notes`, manifest `/notes`) for the warning only.
Why it matters: A9.5: without a measured, accepted quantity only the package cost is
computed; extrapolating a measured pass to 3, 7 or 30 days of production invents output that
was never run or validated (A9.3: repetitions are not deliverables).
Example: `{"figure": "corpora_per_period", "value": 12000, "period_days": 7, "unit":
"corpora", "accepted_corpora": 1}`, or any projection with `accepted_corpora` null.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from auditor.model import Finding
from auditor.protocols.a.artifacts import CLAIMS
from auditor.protocols.a.economics import package_total
from auditor.protocols.a.facts.economics import chosen_offer
from auditor.protocols.a.facts.notes import note_matches, phrases
from auditor.protocols.a.facts.passes import accepted_corpora, variant_accepted
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_COUNTS = ("corpora_per_period", "cadence")


def _measured(view: RunView) -> dict[str | None, int]:
    """Distinct accepted corpora recomputed, per variant and (key None) for the run."""
    if view.results is None or view.outputs is None or view.expected_ids is None:
        return {}
    out: dict[str | None, int] = {None: accepted_corpora(view)}
    for v, n in variant_accepted(view).select("variant_id", "accepted_corpora").iter_rows():
        out[v] = int(n)
    return out


_CENTS = {"usd_minor", "usd_cents", "cents", "usd cents"}
_DOLLARS = {"usd", "$", "us$", "dollars"}


def _cost_mismatch(view: RunView, p: dict) -> str | None:
    """What a typed cost per accepted corpus should be (the package total of the offer the
    manifest names, over the projection's accepted corpora), when P's differs; None when it
    agrees or there is no offer to compute it from (A0901 says why)."""
    chosen = chosen_offer(view)
    econ = (view.manifest or {}).get("economics")
    if chosen is None or not econ:
        return None
    per = Decimal(package_total(chosen[1], econ["lots"])) / Decimal(p["accepted_corpora"])
    unit = p["unit"].strip().casefold()
    if unit in _CENTS:
        want, text = per, f"{per:.2f} usd_minor"
    elif unit in _DOLLARS:
        want, text = per / 100, f"{per / 100:.4f} usd"
    else:
        return f"a cost in usd_minor or usd ({per:.2f} usd_minor), not in {p['unit']!r}"
    return None if abs(Decimal(repr(float(p["value"]))) - want) <= Decimal("0.01") else text


@rule(
    code="A0904",
    title="no projected cadence",
    protocol_ref="A9.5",
    severity="error",
    requires=("manifest",),
    fix="Give only the package cost without a measured accepted count; project no cadence.",
)
def check(view: RunView) -> Iterator[Finding]:
    projections = (view.claims or {}).get("projections") or []
    measured = _measured(view) if projections else {}
    for n, p in enumerate(projections):
        where = f"/projections/{n}"
        have = measured.get(p.get("variant_id"), 0)
        basis = p["accepted_corpora"]
        if not basis:
            yield RULE.finding(
                f"a {p['figure']} is stated without a measured accepted count; "
                "only the package cost may be computed",
                artifact=CLAIMS,
                pointer=f"{where}/accepted_corpora",
                observed=basis,
                expected="a measured count of accepted corpora, or no projection",
            )
        elif not measured:  # the CSV or the outputs did not load: nothing to compare with
            continue  # (their own findings say why; 0 would be a count never made)
        elif basis > have:
            yield RULE.finding(
                f"the {p['figure']} rests on {basis} accepted corpora; the outputs show {have}",
                artifact=CLAIMS,
                pointer=f"{where}/accepted_corpora",
                observed=basis,
                expected=f"<= {have}",
            )
        elif (
            p["figure"] == "cost_per_accepted_corpus"
            and (wrong := _cost_mismatch(view, p)) is not None
        ):
            yield RULE.finding(
                f"the cost per accepted corpus is not the package total divided "
                f"by the {basis} accepted corpora it rests on",
                artifact=CLAIMS,
                pointer=f"{where}/value",
                observed=f"{p['value']:g} {p['unit']}",
                expected=wrong,
                protocol_ref="A9.3",
            )
        elif p["figure"] in _COUNTS and p["value"] > have:
            yield RULE.finding(
                f"the {p['figure']} states {p['value']:g} corpora while "
                f"{have} were accepted: production projected, not measured",
                artifact=CLAIMS,
                pointer=f"{where}/value",
                observed=p["value"],
                expected=f"<= {have} (the accepted corpora measured)",
            )
    for artifact, loc, hit, _, sentence in note_matches(view, phrases("cadence")):
        yield RULE.finding(
            f"a note may project a cadence ({hit!r}); notes are not judged: "
            "state projections in claims.json",
            artifact=artifact,
            **loc,
            severity="warning",
            observed=sentence,
            expected="the package cost, and per accepted corpus only if measured",
        )


RULE = check
