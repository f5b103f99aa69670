"""A0405: the offer compared is for the GPUs the run used, and its lots hold them.

What it checks: when the manifest names an offer and a pass used GPUs (its device map): the
GPUs used are no more than the lots billed hold (`gpus_per_lot` x the manifest's `lots`), an
error; and the offer's `gpu_model` is the model the driver reported for them (every word of
the offer's model in the driver's name), a warning when it is not: the run is no less valid,
but its accepted count says nothing of that offer's hardware, so no cost per accepted corpus
is computed for it. A CPU run may name an offer: its economics are the package cost only.
Reads: manifest `/economics/offer_id`, `/economics/lots`; offers `gpu_model`,
`gpus_per_lot`; placement `parameter_devices`, `input_devices`, `gpus_used[].name`.
Why it matters: A4.2 and A9.1: the price compared is the package of the hardware that did the
work; an accepted count measured on one GPU says nothing of another, and a run that used
more GPUs than the lots hold was not paid for by that package.
Example: two GPUs used under one lot of a one-GPU offer (an error); a run on "NVIDIA
A100-SXM4-80GB" compared with an H100 offer (a warning).
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.derive import chosen_offer, gpu_models, gpus_used
from auditor.protocols.a.economics import same_gpu
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(code="A0405", title="offer matches the GPUs used", protocol_ref="A4.2",
      severity="error", requires=("manifest", "offers", "placement"))
def check(view: RunView) -> Iterator[Finding]:
    chosen = chosen_offer(view)
    used = gpus_used(view)
    if chosen is None or used == 0:
        return  # no offer named, an unknown one (A0901), or a CPU run
    n, offer = chosen
    models = gpu_models(view)
    if models and not same_gpu(offer["gpu_model"], models):
        yield RULE.finding(f"offer {offer['offer_id']} is for {offer['gpu_model']}; the run "
                           f"used {', '.join(sorted(models))}: only its package cost can be "
                           "given, no cost per accepted corpus", artifact=view.offers_path,
                           pointer=f"/offers/{n}/gpu_model", observed=offer["gpu_model"],
                           expected=sorted(models), protocol_ref="A9.1", severity="warning")
    lots = view.manifest["economics"]["lots"]
    if used > offer["gpus_per_lot"] * lots:
        yield RULE.finding(f"the run used {used} GPUs; {lots} lot(s) of offer "
                           f"{offer['offer_id']} hold {offer['gpus_per_lot'] * lots}",
                           artifact=view.offers_path, pointer=f"/offers/{n}/gpus_per_lot",
                           observed=used, expected=f"<= {offer['gpus_per_lot'] * lots}",
                           lots=lots)


RULE = check
