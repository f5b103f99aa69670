"""B0701: an accelerator policy draws less average power AND spends fewer joules per inference
than the CPU-only baseline, on the same power source, the same domains summed.

What it checks: for each accelerator policy whose ok trials and the baseline's all have a
measured energy, both were measured on the same power source and power mode (trials.csv
`power_source`, `power_mode`; the protocol's decision on B7),
the same power domains are summed for both and they hold the policy's accelerator and the
CPU (what each summed reading `includes`, `facts/comparisons.py`), and then the policy's
pooled average power and joules per inference are both lower than the baseline's. A domain
missing on either side makes the comparison `incomplete` (missing evidence); different
power sources make it invalid; a policy not lower on both is rejected. A policy or baseline
without pooled energy is B1001's.
Reads: the pooled figures (power traces over every ok trial's window, answer counts);
trials.csv `power_source`; manifest `/baseline_policy`, `/policies`.
Why it matters: B7: "the accelerator policy is accepted only when it uses less average power
and fewer joules per inference than CPU-only on the same machine and power source"; faster
is not cheaper, and an NPU that draws more than the CPU it replaces is not a win on battery.
Example: `npu` 6.1 W and 0.011 J per inference against the CPU's 5.2 W and 0.013 J: less
energy per inference, but more power: rejected.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.comparisons import comparisons
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.rules._where import at_policy
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0701",
    title="lower power and energy than the CPU",
    protocol_ref="B7",
    severity="error",
    requires=("manifest", "trials"),
    fix="Keep the CPU-only policy as the default, or improve the accelerator path until it "
    "draws less power and energy per inference on the same machine and power source.",
)
def check(view: RunView) -> Iterator[Finding]:
    facts = policy_facts(view)
    for pid, c in comparisons(view).items():
        f = facts[pid]
        if c.status == "incomplete" and (
            f.energy_missing or c.baseline == "" or facts[c.baseline].energy_missing
        ):
            continue  # no pooled energy on one side: B1001's
        if c.status == "lower":
            continue
        yield RULE.finding(
            f"accelerator policy {pid} against the CPU-only baseline {c.baseline}: "
            + {
                "not_lower": "not lower on both counts: ",
                "invalid": "compared across power states: ",
                "incomplete": "the comparison is incomplete: ",
            }[c.status]
            + c.reason,
            **at_policy(f),
            observed={"average_power_w": c.power_w, "joules_per_inference": c.jpi},
            expected={
                "average_power_w": f"< {c.baseline_power_w}",
                "joules_per_inference": f"< {c.baseline_jpi}",
            },
            missing_evidence=c.status == "incomplete",
        )


RULE = check
