"""B0201: 100 batch-one warm-up classifications before every trial.

What it checks: the manifest declares at least `PROTOCOL_WARMUP` (100) warm-up iterations,
and every `ok` trial's row records at least that many, the declared number.
Reads: manifest `/warmup_iterations`; trials.csv `warmup_iterations`, `status`.
Why it matters: B2: the first classifications of a session pay for loading, compilation
and caches (Core ML and Windows ML compile on first use); a trial without its warm-up times
the start-up, not the policy.
Example: trials.csv row 3 `warmup_iterations` 10.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST
from auditor.protocols.b.facts.declared import PROTOCOL_WARMUP
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0201",
    title="warm-up of 100 classifications",
    protocol_ref="B2",
    severity="error",
    requires=("manifest", "trials"),
    fix="Run 100 batch-one classifications before each trial's window, and record them.",
)
def check(view: RunView) -> Iterator[Finding]:
    declared = view.m["warmup_iterations"]
    floor = PROTOCOL_WARMUP
    if declared < floor:
        yield RULE.finding(
            f"{declared} warm-up iteration(s) declared, the protocol asks {floor}",
            artifact=MANIFEST,
            pointer="/warmup_iterations",
            observed=declared,
            expected=floor,
        )
    for t in trials(view):
        done = t.claims.get("warmup_iterations")
        if t.status == "ok" and (done is None or done < max(floor, declared)):
            yield RULE.finding(
                f"{t.name} records {done} warm-up iteration(s)",
                **at_trial(t),
                observed=done,
                expected=max(floor, declared),
                evidence={"field": "warmup_iterations"},
            )


RULE = check
