"""B0305: each trial's latencies are its own, not another trial's copied.

What it checks: no two ok trials (of one policy or of two) hold the very same per-inference
latencies in their outputs files, in the same order or shuffled (the same values, each as
often), when the sequence has at least
`MIN_P95_VALUES` values and `MIN_DISTINCT_COPIED` distinct ones (a coarse timer's few values
can repeat honestly; a thousand microsecond timings cannot).
Reads: outputs/<policy_id>/trial-<n>.jsonl `latency_ms`; trials.csv `status`.
Why it matters: B3 asks for at least five trials per policy and reports the p95 and median
over them; a trial whose latencies are another's was never timed, so the five trials (or the
comparison of two policies) rest on fewer measurements than they claim.
Example: outputs/cpu/trial-2.jsonl holds the 1,000 latencies of outputs/cpu/trial-1.jsonl,
shuffled.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.trials import copied_latencies
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0305",
    title="latencies of their own trial",
    protocol_ref="B3",
    severity="error",
    requires=("trials", "outputs"),
    fix="Time every trial and keep its own latencies; a trial that did not run is a failed "
    "row, not a copy of another.",
)
def check(view: RunView) -> Iterator[Finding]:
    for group in copied_latencies(view):
        first = group[0]
        for t in group[1:]:
            yield RULE.finding(
                f"{t.name}: its {t.n_latencies} latencies are, value for value, "
                f"those of {first.name} (in any order): they were not timed "
                "in this trial",
                **at_trial(t),
                observed=t.outputs_file,
                expected="latencies of its own",
                evidence={
                    "field": "p95_latency_ms",
                    "copy_of": first.outputs_file,
                    "output": t.outputs_file,
                },
            )


RULE = check
