"""B0007: the run is complete: every declared policy has its rows, every trial its row.

What it checks: `manifest.status` is `complete`; every `[policy_id, trial_index]` of
`manifest.trial_order` has a trials.csv row; every declared policy has `trials_per_policy`
rows in trials.csv (failed and skipped ones included) and one row in policies.csv.
Reads: manifest `/status`, `/trial_order`, `/trials_per_policy`, `/policies`; trials.csv
`policy_id`, `trial_index`; policies.csv `policy_id`.
Why it matters: an aborted run, or one where planned trials have no row, cannot support a
comparison (B3): the missing trials may be the slow or power-hungry ones.
Example: `trial_order` holds `["npu", 5]` and trials.csv has no row for it.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST, POLICIES, TRIALS
from auditor.protocols.b.facts.declared import policies
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0007",
    title="run not complete",
    protocol_ref="B3",
    severity="error",
    requires=("manifest", "trials", "policies"),
    fix="Finish the run, or re-run it; keep a row for every trial, failed ones included.",
)
def check(view: RunView) -> Iterator[Finding]:
    m = view.m
    aborted = m["status"] != "complete"
    if aborted:
        yield RULE.finding(
            f"the run is {m['status']}, not complete",
            artifact=MANIFEST,
            pointer="/status",
            observed=m["status"],
            expected="complete",
            missing_evidence=True,
        )
    rows = {t.key for t in trials(view)}
    for i, (pid, n) in enumerate(m["trial_order"]):
        if (pid, n) not in rows:
            yield RULE.finding(
                f"trial {pid} {n} of trial_order has no trials.csv row",
                artifact=TRIALS,
                pointer=f"/trial_order/{i}",
                observed="no row",
                expected=f"{pid} trial {n}",
                missing_evidence=aborted,
                subject=policy_subject(pid, n),
            )
    per = m["trials_per_policy"]
    listed = set(view.policies["policy_id"].to_list())
    for pid in policies(view):
        have = sum(1 for k in rows if k[0] == pid)
        if have < per:
            yield RULE.finding(
                f"policy {pid} has {have} trials.csv row(s), {per} declared",
                artifact=TRIALS,
                observed=have,
                expected=per,
                missing_evidence=aborted,
                subject=policy_subject(pid),
            )
        if pid not in listed:
            yield RULE.finding(
                f"policy {pid} has no policies.csv row",
                artifact=POLICIES,
                observed="no row",
                expected=pid,
                missing_evidence=aborted,
                subject=policy_subject(pid),
            )


RULE = check
