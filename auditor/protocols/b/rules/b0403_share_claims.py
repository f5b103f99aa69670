"""B0403: the operation and cost shares policies.csv claims are the placement evidence's.

What it checks: for each accelerator policy, policies.csv `operation_share` and
`estimated_cost_share` equal the shares recomputed from its placement frame (at their
rounding; a share the evidence cannot give must be empty), a share is claimed only from a
whole report (a placement report its reader finds cut short, such as a compute-plan log
ending in `....`, holds part of the operations: it supports no share claim), and
`operation_share_floor` is the declared floor.
Reads: policies.csv `operation_share`, `estimated_cost_share`, `operation_share_floor`;
placement/* (nodes, devices, estimated costs, the reader's `truncated` faults); manifest
floors.
Why it matters: B5 compares the share of operations and of estimated cost on the
accelerator with the artifact's required floor; a share copied from another candidate (90.91 %
of the float16 package for the W8A8 one) passes a floor the model did not meet.
Example: policies.csv claims 0.9091 for `ane`; its compute plan gives 114 of 119 = 0.9580.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.claims import agrees
from auditor.protocols.b.facts.placement import placements
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.rules._where import at_policy, claim, fmt
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0403",
    title="share claims recomputed",
    protocol_ref="B4",
    severity="error",
    requires=("policies",),
    fix="Write the shares computed from the policy's own placement file, and its declared floor.",
)
def check(view: RunView) -> Iterator[Finding]:
    places = placements(view)
    for pid, f in policy_facts(view).items():
        if f.policy.role != "accelerator" or not f.claims:
            continue
        p = places.get(pid)
        shares = {
            "operation_share": p.operation_share if p else None,
            "estimated_cost_share": p.cost_share if p else None,
            "operation_share_floor": f.policy.floor,
        }
        claimed = [
            c for c in ("operation_share", "estimated_cost_share") if f.claims.get(c) is not None
        ]
        if p is not None and p.truncated and claimed:
            yield RULE.finding(
                f"policy {pid}: policies.csv claims {' and '.join(claimed)} "
                f"from {p.used}, a report cut short at line {p.truncated[0]}: "
                "a share over part of the operations supports no claim",
                **at_policy(f),
                observed={c: f.claims[c] for c in claimed},
                expected="shares from a whole report",
                evidence={"placement": p.used, "truncated_at": p.truncated[0]},
            )
        for col, value in shares.items():
            said, text = claim(f.claims, f.texts, col)
            if said is None and col != "operation_share_floor":
                continue  # not claimed: nothing to check (B0402 judges the share itself)
            if not agrees(said, text, value):
                yield RULE.finding(
                    f"policy {pid}: {col} {text or 'empty'}, the "
                    + ("declaration says" if col.endswith("floor") else "placement evidence gives")
                    + f" {fmt(value)}",
                    **at_policy(f),
                    observed=said,
                    expected=value,
                    evidence={"field": col, "placement": p.used if p else None},
                )


RULE = check
