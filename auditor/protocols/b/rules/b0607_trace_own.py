"""B0607: each trial's power trace is its own, not another trial's re-timed.

What it checks: no two ok trials' power traces hold the very same sequence of power readings
(the watts of every reading, in file order), whatever the times they carry, when the
sequence has at least `MIN_COPIED_READINGS` readings and `MIN_DISTINCT_COPIED` distinct
values (a steady draw read coarsely can repeat honestly; a live trace cannot).
Reads: power/<policy_id>/trial-<n>.* (every reading's watts, in order).
Why it matters: B6 asks for the power of each trial's own inference region. A trace copied
from another trial with its timestamps moved onto this trial's window measures the other
trial: the five trials of a policy, or two policies compared, rest on fewer measurements
than they claim, and a policy can borrow the baseline's (or a cheaper run's) draw.
Example: power/ane/trial-3.txt is power/ane/trial-1.txt with every header one minute later.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.trials import copied_traces
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0607",
    title="power trace of its own trial",
    protocol_ref="B6",
    severity="error",
    requires=("trials", "power"),
    fix="Keep each trial's own raw trace as its tool wrote it; a trial that was not "
    "measured has no trace and no energy figure.",
)
def check(view: RunView) -> Iterator[Finding]:
    for group in copied_traces(view):
        first = group[0]
        mine = view.power[first.key].path
        for t in group[1:]:
            theirs = view.power[t.key].path
            yield RULE.finding(
                f"{t.name}: its power trace holds, reading for reading, the "
                f"power of {first.name}'s ({mine}) under other times: it was "
                "not measured in this trial",
                artifact=theirs,
                subject=at_trial(t)["subject"],
                observed=theirs,
                expected="a trace of its own",
                evidence={"copy_of": mine},
            )


RULE = check
