"""B0902: no discrete-GPU policy was measured on battery.

What it checks: a Windows ML policy (declared, or whose placement evidence is a Windows ML
session) whose session was assigned a GPU (its placement record's first provider's device)
has no ok trial whose row records `battery` as the power source, unless the manifest's
`power_state_checks.battery_skips_discrete_gpu` is `not_applicable` (no discrete GPU: the
GPU is the integrated one) and the run's own evidence shows no discrete GPU
(environment.json's `gpus`, a trace's GPU power).
Reads: placement/* (`assigned`); trials.csv `power_source`, `status`; manifest
`/power_state_checks`; environment.json `/gpus`; power/*.
Why it matters: B9: on battery the discrete-GPU rung is skipped (the Windows procedure
compares MAX_EFFICIENCY with the CPU); a GPU measured on battery is a configuration the app
never runs.
Example: `gpu-trtrtx` trials 1-5 recorded on battery.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.placement import is_windows_ml, placements
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.facts.power_state import BATTERY, discrete_gpu
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0902",
    title="discrete GPU skipped on battery",
    protocol_ref="B9",
    severity="error",
    requires=("manifest", "trials"),
    fix="Measure the discrete-GPU policy on AC only; on battery compare MAX_EFFICIENCY with "
    "an explicit CPU session.",
)
def check(view: RunView) -> Iterator[Finding]:
    checks = view.m.get("power_state_checks")
    entry = checks.get(BATTERY) if isinstance(checks, dict) else None
    if (
        isinstance(entry, dict)
        and entry.get("result") == "not_applicable"
        and discrete_gpu(view) is None
    ):
        return
    places = placements(view)
    for pid, f in policy_facts(view).items():
        p = places.get(pid)
        if not is_windows_ml(view, pid) or p is None or not p.assigned:
            continue
        if str(p.assigned[0].get("device_type")) != "GPU":
            continue
        for t in f.ok:
            if t.claims.get("power_source") == "battery":
                yield RULE.finding(
                    f"{t.name}: policy {pid} runs on the GPU "
                    f"({p.assigned[0].get('execution_provider')}) and was "
                    "measured on battery",
                    **at_trial(t),
                    observed="battery",
                    expected="ac",
                    evidence={"field": "power_source"},
                )


RULE = check
