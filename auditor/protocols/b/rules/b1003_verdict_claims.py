"""B1003: the verdict each policy claims is one its evidence allows.

What it checks: policies.csv `verdict` is `baseline` for the declared baseline and for it
only; a policy claimed `accepted` has at least five ok trials, passes both gates, ran on its
accelerator (an accelerator policy) or is a lite-tier model (a CPU-only one), and, for an
accelerator policy whose energy and the baseline's are recomputed, draws less power and
energy per inference than the baseline. A claim the auditor cannot yet check (energy not
measured) is B1001's.
Reads: policies.csv `verdict`; the facts of B0301, B0402, B0501, B0701, B0801.
Why it matters: B7, B8, B10: procurement reads the verdict column; an `accepted` that the
evidence contradicts buys the wrong hardware.
Example: `npu` claimed accepted; its placement puts 40 % of operations on the Neural Engine
(floor 90 %).
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.comparisons import comparisons
from auditor.protocols.b.facts.declared import MIN_TRIALS, model_tier
from auditor.protocols.b.facts.placement import residency
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.rules._where import at_policy
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B1003",
    title="verdict claims",
    protocol_ref="B10",
    severity="error",
    requires=("manifest", "policies", "trials"),
    fix="Write each policy's verdict from the protocol's order: gates, trials, residency, "
    "then energy against the baseline; baseline for the declared baseline only.",
)
def check(view: RunView) -> Iterator[Finding]:
    comps = comparisons(view)
    deep = model_tier(view) == "deep"
    for pid, f in policy_facts(view).items():
        said = f.claims.get("verdict")
        if said is None:
            continue
        where = at_policy(f)
        if (said == "baseline") != f.policy.is_baseline:
            yield RULE.finding(
                f"policy {pid}: verdict {said!r}, but "
                + (
                    "it is the declared baseline"
                    if f.policy.is_baseline
                    else "the declared baseline is another policy"
                ),
                **where,
                observed=said,
                expected="baseline" if f.policy.is_baseline else "accepted or rejected",
                evidence={"field": "verdict"},
            )
            continue
        if said != "accepted":
            continue
        against = []
        if len(f.ok) < MIN_TRIALS:
            against.append(f"{len(f.ok)} ok trial(s)")
        if f.gate_passed is False:
            against.append("it fails a gate")
        if f.policy.role == "accelerator":
            why = residency(view, pid)
            if why:
                against.append(why)
            c = comps.get(pid)
            if c is not None and c.status in ("not_lower", "invalid"):
                against.append(c.reason)
        elif deep:
            against.append("a deep-tier model on the bare CPU")
        if against:
            yield RULE.finding(
                f"policy {pid} is claimed accepted, but {'; '.join(against)}",
                **where,
                observed="accepted",
                expected="rejected",
                evidence={"field": "verdict"},
            )


RULE = check
