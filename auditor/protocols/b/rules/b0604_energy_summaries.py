"""B0604: the run's energy summaries of each window match the raw trace.

What it checks: where the run keeps a summary per trial (our runner's
energy/<policy_id>/trial-<n>.json, its summarized table of the raw trace), the summary's
status (`measured`, `below_resolution`, `not_measured`), window length, energy, average power
and instrument are what the auditor recomputes from the trace over the same window; and every
ok trial with a trace has its summary once the run keeps any.
Reads: energy/<policy_id>/trial-<n>.json (`status`, `window_seconds`, `energy_j`,
`average_power_w`, `energy_source`); power/<policy_id>/trial-<n>.*.
Why it matters: B6: "the raw trace is stored; the report carries its summary table": a
summary that says more than the trace (a figure where the trace is below resolution) is a
claim without evidence.
Example: energy/npu/trial-2.json says measured, 14.2 J; the trace's counters updated twice
inside the window: below resolution.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from auditor.model import Finding
from auditor.protocols.b.facts.claims import agrees
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule

STATUS = {"measured": "measured", "below_resolution": "below_resolution"}
"""The auditor's energy status -> the summary's (anything else is `not_measured`)."""


@rule(
    code="B0604",
    title="energy summaries match the trace",
    protocol_ref="B6",
    severity="error",
    requires=("trials",),
    fix="Write each summary from the trial's own raw trace, by the protocol's conventions.",
)
def check(view: RunView) -> Iterator[Finding]:
    if not view.energy_docs and "energy" not in view.unavailable_reason:
        return  # the run keeps no summaries (an external harness): nothing to compare
    for t in trials(view):
        e = t.energy
        if t.status != "ok" or e is None or e.trace is None:
            continue
        doc = view.energy_docs.get(t.key)
        rel = f"energy/{t.policy_id}/trial-{t.trial_index}.json"
        where: dict[str, Any] = {
            "artifact": rel,
            "subject": policy_subject(t.policy_id, t.trial_index),
        }
        if doc is None:
            yield RULE.finding(
                f"{t.name} has a trace but no energy summary",
                **where,
                observed="absent",
                expected=rel,
                missing_evidence=True,
            )
            continue
        want = STATUS.get(e.status, "not_measured")
        if doc["status"] != want:
            yield RULE.finding(
                f"{t.name}: the summary says {doc['status']}, the trace gives "
                f"{want}" + (f" ({e.reason})" if e.reason else ""),
                **where,
                pointer="/status",
                observed=doc["status"],
                expected=want,
            )
            continue
        checks = [("window_seconds", doc.get("window_seconds"), t.wall_s)]
        if e.measured:
            checks += [
                ("energy_j", doc.get("energy_j"), e.energy_j),
                ("average_power_w", doc.get("average_power_w"), e.average_power_w),
            ]
        for key, said, value in checks:
            if (
                said is not None
                and value is not None
                and not agrees(float(said), repr(said), value)
            ):
                yield RULE.finding(
                    f"{t.name}: the summary's {key} is {said}, the trace gives {value:.6g}",
                    **where,
                    pointer=f"/{key}",
                    observed=said,
                    expected=value,
                )
        if e.measured and (doc.get("energy_source") or "") != (e.source or ""):
            yield RULE.finding(
                f"{t.name}: the summary's instrument is "
                f"{doc.get('energy_source')!r}, the trace's {e.source!r}",
                **where,
                pointer="/energy_source",
                observed=doc.get("energy_source"),
                expected=e.source,
            )


RULE = check
