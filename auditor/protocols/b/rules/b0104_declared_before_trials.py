"""B0104: the declaration was fixed before the first trial started.

What it checks: the manifest's `declared_at`, and the `declared_at` a part of the
declaration records when it was fixed apart from the rest (the gates' floors `gates`, the
placement floor `placement`, the energy window and its minimums `energy`, a policy
`policies[i]`), is no later than the start of the first trial (the earliest window start of
trials.csv, from the trace's markers or the row's `started_at`), within
`CLOCK_TOLERANCE_S` (a time written to the second).
Reads: manifest `/declared_at`, `/gates/declared_at`, `/placement/declared_at`,
`/energy/declared_at`, `/policies/*/declared_at`; trials.csv `started_at`; the traces'
window markers.
Why it matters: B1 and RUN_DIR.md: the floors, thresholds and policies are declared before
measuring; a floor set after the trials ran (70 % once the plan showed 71 %) or a policy added
once its figures were known is chosen by the result it is meant to judge.
Example: `declared_at` 2026-03-02T10:14:00Z; the first trial started at 09:00:00.3Z.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST
from auditor.protocols.b.facts.declared import declarations
from auditor.protocols.b.facts.placement import CLOCK_TOLERANCE_S
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0104",
    title="declared before the first trial",
    protocol_ref="B1",
    severity="error",
    requires=("manifest", "trials"),
    fix="Fix the policies, floors and thresholds before the first trial, and record when "
    "(declared_at); a change after that is a new run.",
)
def check(view: RunView) -> Iterator[Finding]:
    started = [t for t in trials(view) if t.start is not None]
    if not started:
        return
    first = min(started, key=lambda t: t.start or 0)
    t0 = (first.start or 0) / 1e9
    when = datetime.fromtimestamp(t0, UTC).isoformat(timespec="milliseconds")
    for d in declarations(view):
        if d.at is None:
            yield RULE.finding(
                f"{d.what}: its declaration time {d.text!r} is not a date-time "
                "with a UTC offset: it cannot be shown to precede the trials",
                artifact=MANIFEST,
                pointer=d.pointer,
                observed=d.text,
                expected="an RFC 3339 date-time",
                missing_evidence=True,
            )
        elif d.at > t0 + CLOCK_TOLERANCE_S:
            yield RULE.finding(
                f"{d.what} was declared at {d.text}, {d.at - t0:,.1f} s after "
                f"the first trial ({first.name}) started at {when}: declared "
                "after measuring",
                artifact=MANIFEST,
                pointer=d.pointer,
                observed=d.text,
                expected=f"<= {when}",
                evidence={"first_trial": at_trial(first)["row"], "first_trial_name": first.name},
            )


RULE = check
