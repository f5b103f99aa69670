"""B0203: every ok trial's answers are the whole sequence, each valid, as many as its row says.

What it checks: every `ok` trial has its outputs file; the file holds the sequence
`energy.repetitions` times (prompts x r lines), every line a valid trial-output line
(`id`, a `label` among the declared classes, a `latency_ms` number >= 0), and the row's
`inferences` is that line count.
Reads: outputs/<policy_id>/trial-<n>.jsonl (line count, validity, labels); manifest
`/energy/repetitions`, `/task/classes`; prompts/sequence.jsonl (length); trials.csv
`inferences`, `status`.
Why it matters: B2: the trial classifies the whole fixed sequence, and its per-inference
latencies and joules per inference are over those answers; a file with answers missing or
malformed measures less work than it claims.
Example: outputs/npu/trial-2.jsonl holds 999 lines; the row claims 1000 inferences.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.declared import repetitions
from auditor.protocols.b.facts.sequence import sequence, trial_outputs
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0203",
    title="trial answers complete and valid",
    protocol_ref="B2",
    severity="error",
    requires=("manifest", "trials", "prompts"),
    fix="Keep every answer of every trial, one valid line each, the sequence r times.",
)
def check(view: RunView) -> Iterator[Finding]:
    n = sequence(view).n * repetitions(view)
    stats = {
        (r["policy_id"], r["trial_index"]): r for r in trial_outputs(view).iter_rows(named=True)
    }
    for t in trials(view):
        if t.status != "ok":
            continue
        s = stats.get(t.key)
        if s is None:
            yield RULE.finding(
                f"{t.name} is ok but has no outputs file",
                **at_trial(t),
                observed="absent",
                expected=f"outputs/{t.policy_id}/trial-{t.trial_index}.jsonl",
                missing_evidence=True,
            )
            continue
        where = {"artifact": s["file"], "subject": policy_subject(t.policy_id, t.trial_index)}
        if s["lines"] != n:
            yield RULE.finding(
                f"{t.name}: {s['lines']} answers, the sequence {repetitions(view)} time(s) is {n}",
                **where,
                observed=s["lines"],
                expected=n,
            )
        if s["n_invalid"]:
            yield RULE.finding(
                f"{t.name}: {s['n_invalid']} invalid line(s), the first: {s['invalid_error']}",
                **where,
                line=s["invalid_first_line"],
                observed=s["n_invalid"],
                expected=0,
            )
        if s["n_bad_label"]:
            yield RULE.finding(
                f"{t.name}: {s['n_bad_label']} label(s) outside the declared classes",
                **where,
                line=s["bad_label_first_line"],
                observed=s["n_bad_label"],
                expected=0,
            )
        claimed = t.claims.get("inferences")
        if claimed != s["lines"]:
            yield RULE.finding(
                f"{t.name}: the row claims {claimed} inferences, its outputs "
                f"file holds {s['lines']} answers",
                **at_trial(t),
                observed=claimed,
                expected=s["lines"],
                evidence={"field": "inferences", "output": s["file"]},
            )


RULE = check
