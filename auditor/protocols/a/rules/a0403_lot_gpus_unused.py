"""A0403: an offer's lot holding more GPUs than the program used is pointed out (warning).

What it checks: when the manifest names an offer, its `gpus_per_lot` against the most GPUs any
pass used (the placement device maps). A lot of two GPUs (B200) with one GPU used is reported, with
the share of the package price that paid for idle GPUs. CPU runs (no GPU used) are not
reported: their economics are about an offer, not about the lot's use.
Reads: manifest `/economics/offer_id`; offers `gpus_per_lot`; placement
`parameter_devices`, `input_devices`.
Why it matters: A4.2 and A9.2: the price covers the whole lot; a run that used one GPU of a
two-GPU lot pays for two, and the economics must say so rather than halve the price.
Example: offer `b200-7d` (2 GPUs per lot), every pass on `cuda:0`: a warning on the offer.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.facts.economics import chosen_offer
from auditor.protocols.a.facts.gpus import gpus_used
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0403",
    title="GPUs of the lot not used",
    protocol_ref="A4.2",
    severity="warning",
    requires=("manifest", "offers", "placement"),
    fix=(
        "Use every GPU of the lot, or price the unused ones honestly: the lot costs the same "
        "either way."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    chosen = chosen_offer(view)
    if chosen is None:
        return  # no offer named, or an unknown one (A0901 reports that)
    n, offer = chosen
    used = gpus_used(view)
    if 0 < used < offer["gpus_per_lot"]:
        yield RULE.finding(
            f"the lot holds {offer['gpus_per_lot']} GPUs and the program used {used}: the "
            "package price covers the whole lot, idle GPUs included",
            artifact=view.offers_path,
            pointer=f"/offers/{n}/gpus_per_lot",
            observed=used,
            expected=offer["gpus_per_lot"],
            evidence={"offer_id": offer["offer_id"]},
        )


RULE = check
