"""B0107: every power-state file lies inside the run's session.

What it checks: each file under power_state/ (the traces and records the power-state checks
cite) lies inside the session's time span: a trace's readings, or a record's capture time,
no earlier than the declaration (`declared_at`, within `CLOCK_TOLERANCE_S`) and no later
than `CAPTURE_MARGIN_S` after the last trial's end (`facts/belonging.py`).
Reads: power_state/* (each trace's reading times, each record's `captured_at`); manifest
`/declared_at`; the trials' windows.
Why it matters: PROTOCOL.md, "Evidence belongs to the run only when it shows so": inside
the session's time span. A power-state trace from another day shows another session's
discrete GPU, not this one's.
Example: power_state/idle-hwinfo.csv was logged a week before the run was declared.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.belonging import time_mismatches
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0107",
    title="evidence of this session",
    protocol_ref="B1",
    severity="error",
    requires=("manifest", "trials"),
    fix="Record the power-state checks in the session that runs the trials, and keep "
    "files of other sessions out of the run.",
)
def check(view: RunView) -> Iterator[Finding]:
    for m in time_mismatches(view):
        yield RULE.finding(
            f"{m.path} is not of this session: {m.named[0]}",
            artifact=m.path,
            observed=m.named[0],
            expected="within the session's time span",
            evidence={"declared_at": view.m.get("declared_at")},
        )


RULE = check
