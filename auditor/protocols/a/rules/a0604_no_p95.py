"""A0604: no p95 (or other tail percentile) is claimed from five passes.

What it checks: each typed summary of `claims.json` (`summaries`) whose statistic is a
percentile above the median (p90, p95, p99...) summarises enough completed passes for it:
at least 100 / (100 - p) (20 for a p95), counted by the auditor from the CSV rows whose
timeline status is ok, not taken from the claim. A note that mentions a p95 or a
percentile gets a warning quoting the sentence, never an error.
Reads: claims `/summaries` (`variant_id`, `phase`, `statistic`, `passes`); CSV
`variant_id`, `phase`, `run_index`, `elapsed_seconds`; timeline `status`; notes (CSV
`notes`, manifest `/notes`) for the warning only.
Why it matters: A6.3: summaries give the median and the min-max range; five observations do
not support a 95th percentile, so a p95 claimed from them is invented precision.
Example: `{"variant_id": "batch-8", "phase": "warm", "statistic": "p95", "value": 1.2,
"unit": "s", "passes": 5}`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import CLAIMS
from auditor.protocols.a.facts.notes import note_matches, phrases
from auditor.protocols.a.facts.timing import duration_summaries
from auditor.protocols.a.view import RunView
from auditor.rule import rule


def passes_needed(statistic: str) -> int:
    """Completed passes a percentile statistic needs (1 for the median and the others)."""
    if not statistic.startswith("p"):
        return 1
    p = float(statistic[1:])
    return 1 if p <= 50 else math.ceil(100 / (100 - p) - 1e-9)


@rule(
    code="A0604",
    title="no p95 from five passes",
    protocol_ref="A6.3",
    severity="error",
    requires=("manifest",),
    fix=("Report the median and the min-max range; drop the p95 (five passes cannot support it)."),
)
def check(view: RunView) -> Iterator[Finding]:
    summaries = (view.claims or {}).get("summaries") or []
    counted: dict[tuple[str, str], int] = {}
    if summaries and view.results is not None and view.timeline is not None:
        counted = {
            (v, p): n
            for v, p, n in duration_summaries(view)
            .select("variant_id", "phase", "passes")
            .iter_rows()
        }
    for n, s in enumerate(summaries):
        need = passes_needed(s["statistic"])
        have = counted.get((s["variant_id"], s["phase"]), s["passes"])
        if have < need:
            yield RULE.finding(
                f"a {s['statistic']} of {s['variant_id']} {s['phase']} passes is claimed from "
                f"{have} completed pass(es); it needs at least {need}: five passes support a "
                "median and a min-max range only",
                artifact=CLAIMS,
                pointer=f"/summaries/{n}/statistic",
                observed=s["statistic"],
                expected=f"median and min-max (or at least {need} passes)",
                evidence={"passes": have},
            )
    for artifact, loc, hit, _, sentence in note_matches(view, phrases("tail_percentile")):
        yield RULE.finding(
            f"a note mentions a tail percentile ({hit!r}); notes are not judged: "
            "state summaries in claims.json",
            artifact=artifact,
            **loc,
            severity="warning",
            observed=sentence,
            expected="median and min-max",
        )


RULE = check
