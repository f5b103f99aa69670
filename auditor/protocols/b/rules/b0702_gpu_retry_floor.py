"""B0702: a GPU retry meets its own declared GPU operation-share floor.

What it checks: a GPU retry (a policy declared with `retry_of`, or Core ML's `all` compute
units) declares its own `gpu_operation_share_floor`, and the share of its placed operations
on the GPU (the Neural Engine's do not count) is at or above it. An error for a deep-tier
model, a warning for a lite one.
Reads: manifest `/policies/*/retry_of`, `/compute_units`, `/gpu_operation_share_floor`,
`/model_tier`; placement/* (devices of the nodes).
Why it matters: B7: "a GPU retry must separately meet its declared GPU operation-share
floor before it can activate a deep model": a `.all` session that puts most operations on
the ANE passes the Neural Engine's floor without showing the GPU path works.
Example: `all-retry` with 12 % of its operations on the GPU and a declared GPU floor of 50 %.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding, Severity
from auditor.protocols.b.artifacts import MANIFEST
from auditor.protocols.b.facts.claims import FLOAT_EPS
from auditor.protocols.b.facts.declared import model_tier, policies
from auditor.protocols.b.facts.placement import placements
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0702",
    title="GPU retry meets its GPU floor",
    protocol_ref="B7",
    severity="error",
    requires=("manifest",),
    fix="Declare the retry's GPU operation-share floor and meet it, or do not activate the "
    "deep model through the retry.",
)
def check(view: RunView) -> Iterator[Finding]:
    severity: Severity = "error" if model_tier(view) == "deep" else "warning"
    places = placements(view)
    for pol in policies(view).values():
        if not pol.is_gpu_retry:
            continue
        if pol.gpu_floor is None:
            yield RULE.finding(
                f"GPU retry {pol.policy_id} declares no GPU operation-share floor",
                artifact=MANIFEST,
                pointer="/policies",
                observed=None,
                expected="gpu_operation_share_floor",
                severity=severity,
                subject=policy_subject(pol.policy_id),
            )
            continue
        p = places.get(pol.policy_id)
        share = p.gpu_share if p is not None and not p.problem else None
        if share is not None and share < pol.gpu_floor - FLOAT_EPS:
            yield RULE.finding(
                f"GPU retry {pol.policy_id}: {share:.2%} of its operations on "
                f"the GPU, below its declared GPU floor of {pol.gpu_floor:.2%}",
                artifact=p.used if p else MANIFEST,
                observed=share,
                expected=pol.gpu_floor,
                severity=severity,
                subject=policy_subject(pol.policy_id),
            )


RULE = check
