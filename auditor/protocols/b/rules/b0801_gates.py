"""B0801: a candidate meets the accuracy and the parity gate, whatever its latency.

What it checks: for every policy but the diagnostic baseline, the accuracy against
corpus/references.jsonl and the agreement with the accepted reference artifact's answers
(reference/outputs.jsonl), recomputed over every answer of its ok trials (or of its gate pass,
gates/<policy_id>.jsonl, when it has none), are at or above the declared floors
(`gates.accuracy_floor`, `gates.agreement_floor`); where the run keeps the policy's gated
evaluation (its gate pass), that evaluation meets them too, on its own answers: a candidate
whose gated evaluation fails is rejected whatever its trials answer (answers swapped in
after a failed gate do not pass it). A candidate below either is rejected; the finding
quotes its p95, which does not save it. A candidate with no answer to judge is missing
evidence.
Reads: outputs (labels), gates/<policy_id>.jsonl, corpus/references.jsonl,
reference/outputs.jsonl; manifest `/gates`, `/baseline_policy`.
Why it matters: B8: the seed's float16 candidate reached 94.98 % accuracy and 97.97 %
agreement: it fails both gates despite a 1.51 ms p95; a fast wrong answer is not a result.
Example: `f16-ane` accuracy 0.9498 (floor 0.97), agreement 0.9797 (floor 0.99), p95 1.51 ms.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.claims import FLOAT_EPS
from auditor.protocols.b.facts.policies import PolicyFacts, policy_facts
from auditor.protocols.b.rules._where import at_policy, fmt
from auditor.protocols.b.view import RunView
from auditor.rule import rule


def _fails(acc: float, agr: float, acc_floor: float, agr_floor: float) -> str:
    return ", ".join(
        x
        for x in (
            f"accuracy {acc:.2%} (floor {acc_floor:.2%})" if acc < acc_floor - FLOAT_EPS else "",
            f"agreement {agr:.2%} (floor {agr_floor:.2%})" if agr < agr_floor - FLOAT_EPS else "",
        )
        if x
    )


@rule(
    code="B0801",
    title="accuracy and parity gates",
    protocol_ref="B8",
    severity="error",
    requires=("manifest", "references", "reference_outputs"),
    fix="Reject the candidate; measure placement, latency and energy on the first candidate "
    "that passes both gates.",
)
def check(view: RunView) -> Iterator[Finding]:
    gates = view.m["gates"]
    acc_floor, agr_floor = gates["accuracy_floor"], gates["agreement_floor"]
    for f in policy_facts(view).values():
        if f.policy.is_baseline or f.policy.status in ("cannot_start", "fault"):
            continue
        if f.accuracy is None or f.agreement is None:
            yield RULE.finding(
                f"policy {f.policy.policy_id} has no answer the gates can judge",
                **at_policy(f),
                observed=None,
                expected="answers",
                missing_evidence=True,
            )
            continue
        fast = f"; despite a p95 of {fmt(f.p95_ms, 3)} ms" if f.p95_ms is not None else ""
        if f.answers_passed is False:
            yield _rejected(
                f,
                f"fails the gates: "
                f"{_fails(f.accuracy, f.agreement, acc_floor, agr_floor)}{fast}: "
                "rejected whatever its latency",
                f.accuracy,
                f.agreement,
                acc_floor,
                agr_floor,
                f.answers_from,
            )
        elif f.gated_passed is False and f.answers_from != "gate pass" and f.gated is not None:
            g = f.gated
            gated = _fails(g.accuracy or 0.0, g.agreement or 0.0, acc_floor, agr_floor)
            yield _rejected(
                f,
                f"fails its gated evaluation (gates/{f.policy.policy_id}.jsonl: "
                f"{gated}), though its trials' answers pass (accuracy "
                f"{f.accuracy:.2%}, agreement {f.agreement:.2%}): answers swapped "
                "in after a failed gate do not pass it",
                g.accuracy,
                g.agreement,
                acc_floor,
                agr_floor,
                "gate pass",
            )


def _rejected(
    f: PolicyFacts,
    why: str,
    acc: float | None,
    agr: float | None,
    acc_floor: float,
    agr_floor: float,
    source: str | None,
) -> Finding:
    return RULE.finding(
        f"candidate {f.policy.policy_id} {why}",
        **at_policy(f),
        observed={"accuracy": acc, "agreement": agr},
        expected={"accuracy": f">= {acc_floor}", "agreement": f">= {agr_floor}"},
        evidence={"answers": source},
    )


RULE = check
