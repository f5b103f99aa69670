"""B0102: every row names a declared compute policy, as the manifest declares it.

What it checks: every trials.csv and policies.csv row's `policy_id` is a policy of the
manifest, with the manifest's `role` and (policies.csv) `runtime`, `compute_units` and
`model_tier`, and the run's `experiment_id`; exactly one declared policy is the `cpu-only`
baseline (`baseline_policy`).
Reads: manifest `/experiment_id`, `/model_tier`, `/baseline_policy`, `/policies`; trials.csv
`experiment_id`, `policy_id`, `role`; policies.csv `experiment_id`, `policy_id`, `role`,
`runtime`, `compute_units`, `model_tier`.
Why it matters: B1 records the runtime compute policy of every trial; a row that says
`cpuAndNeuralEngine` where the manifest declared `cpuOnly` puts the CPU's figures under the
Neural Engine's name.
Example: policies.csv row 2 `compute_units` `cpuAndGPU`, the manifest `cpuAndNeuralEngine`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST, POLICIES
from auditor.protocols.b.facts.declared import policies
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0102",
    title="rows match the declared policies",
    protocol_ref="B1",
    severity="error",
    requires=("manifest", "trials", "policies"),
    fix="Write every row from the declared policy it measured; declare one cpu-only baseline.",
)
def check(view: RunView) -> Iterator[Finding]:
    m = view.m
    pols = policies(view)
    base = pols.get(m["baseline_policy"])
    if base is None or base.role != "cpu-only":
        yield RULE.finding(
            f"baseline_policy {m['baseline_policy']!r} is not a declared cpu-only policy",
            artifact=MANIFEST,
            pointer="/baseline_policy",
            observed=m["baseline_policy"],
            expected="a cpu-only policy_id",
        )
    exp = m["experiment_id"]
    for t in trials(view):
        pol = pols.get(t.policy_id)
        if pol is None:
            yield RULE.finding(
                f"trials.csv names policy {t.policy_id!r}, which the manifest does not declare",
                **at_trial(t),
                observed=t.policy_id,
                expected=sorted(pols),
            )
            continue
        for col, want in (("role", pol.role), ("experiment_id", exp)):
            if t.claims.get(col) != want:
                yield RULE.finding(
                    f"{t.name}: {col} {t.claims.get(col)!r}, declared {want!r}",
                    **at_trial(t),
                    observed=t.claims.get(col),
                    expected=want,
                    evidence={"field": col},
                )
    if view.policies is None:
        return
    for r in view.policies.iter_rows(named=True):
        pol = pols.get(r["policy_id"])
        where = {"artifact": POLICIES, "row": r["row"], "subject": policy_subject(r["policy_id"])}
        if pol is None:
            yield RULE.finding(
                f"policies.csv names policy {r['policy_id']!r}, which the "
                "manifest does not declare",
                **where,
                observed=r["policy_id"],
                expected=sorted(pols),
            )
            continue
        for col, want in (
            ("role", pol.role),
            ("runtime", pol.runtime),
            ("compute_units", pol.compute_units),
            ("model_tier", m["model_tier"]),
            ("experiment_id", exp),
        ):
            if r.get(col) != want:
                yield RULE.finding(
                    f"policy {pol.policy_id}: {col} {r.get(col)!r}, declared {want!r}",
                    **where,
                    observed=r.get(col),
                    expected=want,
                    evidence={"field": col},
                )


RULE = check
