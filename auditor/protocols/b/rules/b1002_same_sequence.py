"""B1002: every policy's trials classified the same prompt sequence.

What it checks: every trial row's `prompt_sequence_sha256` is the SHA-256 recomputed from
prompts/sequence.jsonl, and every ok trial's answers follow that sequence, in its order,
repeated (the n-th answer's ID is the sequence's (n mod length)-th).
Reads: trials.csv `prompt_sequence_sha256`, `status`; prompts/sequence.jsonl (bytes, IDs);
outputs (`id` of every line, in order).
Why it matters: B10: a comparison of policies run on different prompt sequences is
rejected: longer prompts cost more tokens and energy, and a shuffled order changes cache
behaviour.
Example: `npu` trial 2's answers start with prompt p0999; the sequence starts with p0000.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.sequence import sequence, trial_outputs
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B1002",
    title="one prompt sequence for every policy",
    protocol_ref="B10",
    severity="error",
    requires=("trials", "prompts"),
    fix="Run every policy on the one declared sequence, in its order; never regenerate it "
    "between policies.",
)
def check(view: RunView) -> Iterator[Finding]:
    sha = sequence(view).sha256
    stats = {
        (r["policy_id"], r["trial_index"]): r for r in trial_outputs(view).iter_rows(named=True)
    }
    for t in trials(view):
        said = t.claims.get("prompt_sequence_sha256")
        if said != sha:
            yield RULE.finding(
                f"{t.name} names another prompt sequence than prompts/sequence.jsonl",
                **at_trial(t),
                observed=said,
                expected=sha,
                evidence={"field": "prompt_sequence_sha256"},
            )
        s = stats.get(t.key)
        if t.status == "ok" and s is not None and s["order_diffs"]:
            yield RULE.finding(
                f"{t.name}: {s['order_diffs']} answer(s) are not the sequence's "
                f"prompt at their place, the first at line "
                f"{s['order_first_line']} ({s['order_first_id']})",
                artifact=s["file"],
                line=s["order_first_line"],
                observed=s["order_first_id"],
                expected="the sequence's order",
                subject=policy_subject(t.policy_id, t.trial_index),
            )


RULE = check
