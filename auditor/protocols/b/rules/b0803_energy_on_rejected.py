"""B0803: energy measured on a candidate rejected at a gate is pointed out.

What it checks: a policy that fails the accuracy or parity gate (B0801) has no ok trial with
an energy measurement or an energy claim: its energy is pointed out as measured on a
rejected package (a warning: the figure may be right, it only answers no question).
Reads: the gates recomputed (B0801); trials.csv energy cells; the trials' power traces.
Why it matters: B8: "do not spend energy-measurement time on that rejected package; repeat
placement, latency and energy measurements on the first accuracy-qualified package": a
rejected candidate's joules per inference on a comparison page invites buying it.
Example: `f16-ane` fails both gates and its five trials report 0.0043 J per inference.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.rules._where import at_policy
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0803",
    title="energy measured on a rejected candidate",
    protocol_ref="B8",
    severity="warning",
    requires=("manifest", "references", "reference_outputs"),
    fix="Measure energy on the first candidate that passes both gates; keep the rejected "
    "one's gate results and placement only.",
)
def check(view: RunView) -> Iterator[Finding]:
    for f in policy_facts(view).values():
        if f.policy.is_baseline or f.gate_passed is not False:
            continue
        measured = [
            t
            for t in f.ok
            if (t.energy is not None and t.energy.measured) or t.claims.get("energy_j") is not None
        ]
        if measured:
            jpi = (
                f" ({f.joules_per_inference:.4g} J per inference)"
                if f.joules_per_inference is not None
                else ""
            )
            yield RULE.finding(
                f"candidate {f.policy.policy_id} fails the gates, yet energy "
                f"was measured on {len(measured)} of its trials{jpi}: a figure "
                "of a rejected package",
                **at_policy(f),
                observed=len(measured),
                expected=0,
            )


RULE = check
