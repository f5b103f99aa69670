"""B0804: the trials answer as the gated evaluation of the same artifact did.

What it checks: where the run keeps a policy's gated evaluation (its gate pass,
gates/<policy_id>.jsonl), each of its ok trials gives the gate pass's answer to the same
prompt at least as often as the parity gate demands of a candidate against the reference
(`gates.agreement_floor`: the same artifact on the same runtime answers alike, batch one,
up to the nondeterminism that floor allows); and where gates/gates.json records the SHA-256
of the artifact a policy's gate pass evaluated (`policies[].artifact_sha256`), it is the
artifact the policy declares it runs (`policies[].artifact_sha256` of the manifest, else
`artifact_sha256`).
Reads: outputs (labels), gates/<policy_id>.jsonl, gates/gates.json `policies[].artifact_sha256`;
manifest `/gates/agreement_floor`, `/policies/*/artifact_sha256`, `/artifact_sha256`.
Why it matters: B8 rejects a candidate that fails a gate and measures energy only on one
that passes: trials whose answers are not the gated artifact's (a passing model's answers
swapped in after the gate failed, or another package timed under the candidate's name) carry
a verdict and figures of a model the gate never judged.
Example: `f16-ane`'s gate pass agrees 97.97 % with the reference (rejected); its five trials
give the reference's answers, 97.97 % of them the gate pass's.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import GATES
from auditor.protocols.b.facts.claims import FLOAT_EPS
from auditor.protocols.b.facts.declared import number
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.facts.sequence import trials_against_gate
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0804",
    title="trials answer as the gated evaluation",
    protocol_ref="B8",
    severity="error",
    requires=("manifest",),
    fix="Time the very artifact the gates evaluated; re-run the gate on any other package "
    "before measuring it.",
)
def check(view: RunView) -> Iterator[Finding]:
    floor = number((view.m.get("gates") or {}).get("agreement_floor"))
    against = trials_against_gate(view)
    facts = policy_facts(view)
    for pid, f in facts.items():
        for t in f.ok:
            a = against.get(t.key)
            if floor is None or a is None or a.share is None or a.share >= floor - FLOAT_EPS:
                continue
            yield RULE.finding(
                f"{t.name}: {a.same:,} of its {a.answers:,} answers "
                f"({a.share:.2%}) are the ones its gated evaluation "
                f"(gates/{pid}.jsonl) gave, below the {floor:.2%} the parity "
                "gate allows: the trial did not time the artifact the gates "
                f"judged (first difference at line {a.first_line} of "
                f"{t.outputs_file})",
                **at_trial(t),
                observed=a.share,
                expected=f">= {floor}",
                evidence={"outputs": t.outputs_file, "first_line": a.first_line},
            )
    g = view.gates
    if g is None:
        return
    run_sha = view.m.get("artifact_sha256")
    for i, entry in enumerate(g.get("policies") or []):
        pid = entry.get("policy_id")
        said = entry.get("artifact_sha256")
        f = facts.get(pid)
        if f is None or not isinstance(said, str):
            continue
        want = f.policy.artifact_sha256 or run_sha
        if isinstance(want, str) and said.lower() != want.lower():
            yield RULE.finding(
                f"gates.json: the gate pass of {pid} evaluated the artifact "
                f"{said[:16]}..., the policy runs {want[:16]}...: its gates "
                "judged another model",
                artifact=GATES,
                pointer=f"/policies/{i}/artifact_sha256",
                observed=said,
                expected=want,
                subject=policy_subject(pid),
            )


RULE = check
