"""B0802: the accuracy and agreement the run claims are the ones its answers give.

What it checks: policies.csv `accuracy` and `agreement` equal the recomputed ones (over the
ok trials' answers, else the gate pass) at their rounding; where the run keeps a gate file
(gates/gates.json), its floors are the manifest's and each policy's accuracy, agreement and
`passed` are those of its gate-pass answers.
Reads: policies.csv `accuracy`, `agreement`; gates/gates.json; gates/<policy_id>.jsonl;
outputs; corpus/references.jsonl; reference/outputs.jsonl; manifest `/gates`.
Why it matters: B8 decides on these two numbers; a claimed 0.9701 where the answers give
0.9498 turns a rejected candidate into an accepted one.
Example: policies.csv claims agreement 0.99 for `f16-ane`; its answers give 0.9797.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import GATES
from auditor.protocols.b.facts.claims import FLOAT_EPS, agrees
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.facts.sequence import gate_pass
from auditor.protocols.b.rules._where import at_policy, claim, fmt
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0802",
    title="gate claims recomputed",
    protocol_ref="B8",
    severity="error",
    requires=("manifest", "references", "reference_outputs"),
    fix="Write accuracy and agreement computed from the policy's own answers.",
)
def check(view: RunView) -> Iterator[Finding]:
    for pid, f in policy_facts(view).items():
        for col, value in (("accuracy", f.accuracy), ("agreement", f.agreement)):
            said, text = claim(f.claims, f.texts, col)
            if f.claims and said is not None and not agrees(said, text, value):
                yield RULE.finding(
                    f"policy {pid}: {col} {text}, its answers give "
                    f"{fmt(value)} ({f.answers_from or 'no answers'})",
                    **at_policy(f),
                    observed=said,
                    expected=value,
                    evidence={"field": col},
                )
    g = view.gates
    if g is None:
        return
    floors = view.m["gates"]
    for key in ("accuracy_floor", "agreement_floor"):
        if g.get(key) != floors[key]:
            yield RULE.finding(
                f"gates.json {key} {g.get(key)}, the manifest declares {floors[key]}",
                artifact=GATES,
                pointer=f"/{key}",
                observed=g.get(key),
                expected=floors[key],
            )
    passes = gate_pass(view)
    for i, entry in enumerate(g.get("policies") or []):
        pid = entry.get("policy_id")
        if entry.get("status") != "evaluated" or pid not in passes:
            continue
        acc, agr = passes[pid].accuracy, passes[pid].agreement
        for key, value in (("accuracy", acc), ("agreement", agr)):
            said = entry.get(key)
            if said is not None and not agrees(float(said), repr(said), value):
                yield RULE.finding(
                    f"gates.json: {pid} {key} {said}, its gate-pass answers give {fmt(value)}",
                    artifact=GATES,
                    pointer=f"/policies/{i}/{key}",
                    observed=said,
                    expected=value,
                    subject=policy_subject(pid),
                )
        passed = (
            acc is not None
            and agr is not None
            and acc >= floors["accuracy_floor"] - FLOAT_EPS
            and agr >= floors["agreement_floor"] - FLOAT_EPS
        )
        if entry.get("passed") != passed:
            yield RULE.finding(
                f"gates.json: {pid} passed {entry.get('passed')}, its answers "
                f"{'pass' if passed else 'fail'}",
                artifact=GATES,
                pointer=f"/policies/{i}/passed",
                observed=entry.get("passed"),
                expected=passed,
                subject=policy_subject(pid),
            )


RULE = check
