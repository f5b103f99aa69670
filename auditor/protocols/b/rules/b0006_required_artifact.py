"""B0006: every artifact protocol B requires is in the run dir.

What it checks: trials.csv, policies.csv, the prompt sequence, the references and the
reference artifact's answers, the trials' answers, the power traces, the placement evidence
and environment.json exist (the runner's extras, gates and energy summaries, are optional).
Reads: the list of files of the run dir.
Why it matters: without one of them a claim of the run cannot be recomputed (B10): latency
without placement evidence or energy, a gate without its reference answers; the verdict is
`incomplete`, not `accepted`.
Example: a run dir without `reference/outputs.jsonl`: the parity gate cannot be checked (B8).
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import BY_KIND
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0006",
    title="required artifact absent",
    protocol_ref="B10",
    severity="error",
    fix="Re-run with the runner or the harness, which writes every required artifact.",
)
def check(view: RunView) -> Iterator[Finding]:
    for kind in sorted(view.absent - {"manifest"}):
        a = BY_KIND[kind]
        yield RULE.finding(
            f"no {kind} artifact ({a.path}: {a.what}): the run cannot be fully audited",
            artifact=a.path,
            missing_evidence=True,
            protocol_ref=a.ref,
            observed="absent",
            expected="present",
        )


RULE = check
