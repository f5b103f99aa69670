"""A0405: the offer compared is for the GPUs the run used, and its lots hold them.

What it checks: when the manifest names an offer and a pass used GPUs (its device map): the
GPUs used are no more than the lots billed hold (`gpus_per_lot` x the manifest's `lots`), an
error, and the lots billed are no more than those GPUs fill (two B200 GPUs are one lot of two,
never two lots: A9.2), an error; a typed cost per accepted corpus (`claims.json` `projections`)
is stated only for an offer of the hardware measured (the GPU model the device maps show; a CPU
offer for a CPU run), an error; and the offer's `gpu_model` is the model the driver reported
for them (every word of the offer's model in the driver's name), a warning when it is not: the
run is no less valid, but its accepted count says nothing of that offer's hardware, so no cost
per accepted corpus is computed for it. A CPU run may name an offer: its economics are the
package cost only.
Reads: manifest `/economics/offer_id`, `/economics/lots`; offers `gpu_model`, `gpus_per_lot`,
`device_class`; claims `/projections` (`figure`); placement `parameter_devices`,
`input_devices`, `gpus_used[].name`.
Why it matters: A4.2 and A9.1: the price compared is the package of the hardware that did the
work; an accepted count measured on one GPU says nothing of another, and a run that used more
GPUs than the lots hold was not paid for by that package.
Example: two GPUs used under one lot of a one-GPU offer (an error); two B200 GPUs billed as two
lots of a two-GPU offer (an error); a cost per accepted corpus for an H100 offer from a run on
the CPU (an error); a run on "NVIDIA A100-SXM4-80GB" compared with an H100 offer (a warning).
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import CLAIMS, MANIFEST
from auditor.protocols.a.economics import device_class, hardware_text, is_b200, same_gpu
from auditor.protocols.a.facts.economics import chosen_offer
from auditor.protocols.a.facts.gpus import gpu_models, gpus_used
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0405",
    title="offer matches the GPUs used",
    protocol_ref="A4.2",
    severity="error",
    requires=("manifest", "offers", "placement"),
)
def check(view: RunView) -> Iterator[Finding]:
    chosen = chosen_offer(view)
    if chosen is None:
        return  # no offer named, or an unknown one (A0901)
    n, offer = chosen
    used = gpus_used(view)
    models = gpu_models(view)
    measured = (device_class(offer) == "cpu" and used == 0) or bool(
        used and models and same_gpu(offer["gpu_model"], models)
    )
    if not measured:
        for k, p in enumerate((view.claims or {}).get("projections") or []):
            if p["figure"] == "cost_per_accepted_corpus":
                yield RULE.finding(
                    f"a cost per accepted corpus is stated for offer {offer['offer_id']} "
                    f"({hardware_text(offer)}), hardware the run did not measure "
                    f"({', '.join(sorted(models)) if used else 'no GPU'})",
                    artifact=CLAIMS,
                    pointer=f"/projections/{k}",
                    observed=p["value"],
                    expected="the package cost only",
                    protocol_ref="A9.1",
                    evidence={"offer_id": offer["offer_id"]},
                )
    if used == 0:
        return  # a CPU run: its economics are the package cost only
    if models and not same_gpu(offer["gpu_model"], models):
        yield RULE.finding(
            f"offer {offer['offer_id']} is for {offer['gpu_model']}; the run "
            f"used {', '.join(sorted(models))}: only its package cost can be "
            "given, no cost per accepted corpus",
            artifact=view.offers_path,
            pointer=f"/offers/{n}/gpu_model",
            observed=offer["gpu_model"],
            expected=sorted(models),
            protocol_ref="A9.1",
            severity="warning",
        )
    lots = view.manifest["economics"]["lots"]
    per_lot = offer["gpus_per_lot"]
    if used > per_lot * lots:
        yield RULE.finding(
            f"the run used {used} GPUs; {lots} lot(s) of offer "
            f"{offer['offer_id']} hold {per_lot * lots}",
            artifact=view.offers_path,
            pointer=f"/offers/{n}/gpus_per_lot",
            observed=used,
            expected=f"<= {per_lot * lots}",
            evidence={"lots": lots},
        )
    elif per_lot > 0 and lots > -(-used // per_lot):
        need = -(-used // per_lot)
        yield RULE.finding(
            f"{lots} lots billed for {used} GPU(s) used; {need} lot(s) of "
            f"{per_lot} GPU(s) hold them"
            + (
                ": a B200 lot of two GPUs counted as one" if is_b200(offer) and lots == used else ""
            ),
            artifact=MANIFEST,
            pointer="/economics/lots",
            observed=lots,
            expected=need,
            protocol_ref="A9.2" if is_b200(offer) else "A9.1",
            evidence={"gpus_per_lot": per_lot, "gpus_used": used},
        )


RULE = check
