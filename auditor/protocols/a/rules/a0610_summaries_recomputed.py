"""A0610: every typed summary equals the one recomputed from the raw durations.

What it checks: each summary of `claims.json` (`summaries`): its `passes` is the number of
the variant's passes of that phase that completed (CSV rows whose timeline status is ok,
with a duration), and a `median`, `min`, `max`, `mean` (or `p50`) value equals the one the
auditor computes from those rows' `elapsed_seconds` (1 ms slack, in the unit given).
Reads: claims `/summaries` (`variant_id`, `phase`, `statistic`, `value`, `unit`,
`passes`); CSV `variant_id`, `phase`, `run_index`, `elapsed_seconds`; timeline `status`.
Why it matters: A6.3: every raw duration is kept so that a summary can be checked; a median
that is not the median of the kept passes, or a summary over passes that do not exist (or
that leaves a slow one out), misreports the configuration.
Example: batch-8's warm median claimed as 0.95 s while its five kept durations give 1.04 s.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import CLAIMS
from auditor.protocols.a.facts.timing import duration_summaries
from auditor.protocols.a.view import RunView
from auditor.rule import rule

SLACK_S = 1e-3
_SCALE = {"s": 1.0, "ms": 1e-3}
_STAT = {"median": "median", "p50": "median", "min": "min", "max": "max", "mean": "mean"}


@rule(
    code="A0610",
    title="summaries equal the raw durations",
    protocol_ref="A6.3",
    severity="error",
    requires=("results", "timeline"),
)
def check(view: RunView) -> Iterator[Finding]:
    summaries = (view.claims or {}).get("summaries") or []
    if not summaries:
        return
    got = {(r["variant_id"], r["phase"]): r for r in duration_summaries(view).iter_rows(named=True)}
    for n, s in enumerate(summaries):
        name = f"{s['variant_id']} {s['phase']}"
        r = got.get((s["variant_id"], s["phase"]))
        if r is None:
            yield RULE.finding(
                f"a summary of {name} passes, of which no completed pass has a duration",
                artifact=CLAIMS,
                pointer=f"/summaries/{n}",
                observed=s["passes"],
                expected=0,
            )
            continue
        if s["passes"] != r["passes"]:
            yield RULE.finding(
                f"the {s['statistic']} of {name} is claimed over "
                f"{s['passes']} passes; {r['passes']} completed",
                artifact=CLAIMS,
                pointer=f"/summaries/{n}/passes",
                observed=s["passes"],
                expected=r["passes"],
            )
        stat = _STAT.get(s["statistic"])
        if stat is None:
            continue
        value = s["value"] * _SCALE[s["unit"]]
        if abs(value - r[stat]) > SLACK_S:
            yield RULE.finding(
                f"the {s['statistic']} of {name} differs from the one of its kept durations",
                artifact=CLAIMS,
                pointer=f"/summaries/{n}/value",
                observed=f"{s['value']} {s['unit']}",
                expected=f"{r[stat] / _SCALE[s['unit']]:.6g} {s['unit']}",
            )


RULE = check
