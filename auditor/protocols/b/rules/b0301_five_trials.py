"""B0301: at least five ok trials per compute policy.

What it checks: every declared policy that was measured (all but one rejected at a gate,
whose trials are `skipped`: B8) has at least `MIN_TRIALS` (5) trials with status `ok`; a
policy that could not start or was a policy fault has none, and is reported with the reason
the manifest gives.
Reads: trials.csv `policy_id`, `status`; manifest `/policies/*/status`, `/reason`.
Why it matters: B3: a median and a comparison over fewer than five trials do not show what
a policy costs; a failed trial is kept in the table, not counted.
Example: `npu` has 3 ok trials and 2 failed ones.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.declared import MIN_TRIALS
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.rules._where import at_policy
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0301",
    title="five ok trials per policy",
    protocol_ref="B3",
    severity="error",
    requires=("manifest", "trials"),
    fix="Re-run the policy until five trials complete; explain every failed trial in notes.",
)
def check(view: RunView) -> Iterator[Finding]:
    for f in policy_facts(view).values():
        if f.trials and all(t.status == "skipped" for t in f.trials):
            continue  # a candidate rejected at a gate: B8 says so
        if len(f.ok) < MIN_TRIALS:
            why = f" ({f.policy.status}: {f.policy.reason})" if f.policy.reason else ""
            yield RULE.finding(
                f"policy {f.policy.policy_id} has {len(f.ok)} ok trial(s), "
                f"at least {MIN_TRIALS} are needed{why}",
                **at_policy(f),
                observed=len(f.ok),
                expected=MIN_TRIALS,
            )


RULE = check
