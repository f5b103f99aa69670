"""A0007: the run is complete: every planned pass has its row.

What it checks: `manifest.status` is `complete`, and every cold or warm pass of
`manifest.pass_order` was run: it has a row in `resultats-bruts.csv` or an entry in
`timeline.jsonl` (a pass that ran but lost its row is A0605's).
Reads: manifest `/status`, `/pass_order`; CSV `variant_id`, `phase`, `run_index`; timeline
`variant_id`, `phase`, `run_index`.
Why it matters: an aborted run, or one where planned passes have no row, cannot support a
comparison (A6.1, A6.4): the missing passes may be the slow or failed ones.
Example: `pass_order` plans `batch-4/warm-5` and the CSV has no such row.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import MANIFEST, RESULTS
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0007",
    title="run not complete",
    protocol_ref="A6.4",
    severity="error",
    requires=("manifest", "results"),
    fix="Finish the run, or re-run it; keep every planned pass, failed ones included.",
)
def check(view: RunView) -> Iterator[Finding]:
    m = view.manifest
    if m["status"] != "complete":
        yield RULE.finding(
            f"the run is {m['status']}, not complete",
            artifact=MANIFEST,
            pointer="/status",
            observed=m["status"],
            expected="complete",
            missing_evidence=True,
        )
    planned = pl.DataFrame(
        [
            (p["variant_id"], p["phase"], p["run_index"])
            for p in m["pass_order"]
            if p["phase"] in ("cold", "warm")
        ],
        schema={"variant_id": pl.String, "phase": pl.String, "run_index": pl.Int64},
        orient="row",
    )
    key = ["variant_id", "phase", "run_index"]
    gone = planned.join(view.results.select(key), on=key, how="anti")
    if view.timeline is not None:
        gone = gone.join(view.timeline.select(key), on=key, how="anti")
    for v, p, r in gone.iter_rows():
        yield RULE.finding(
            f"planned pass {v}/{p}-{r} never ran: no row, no timeline entry",
            artifact=RESULTS,
            observed="no row",
            expected=f"{v}/{p}-{r}",
            missing_evidence=m["status"] != "complete",
        )


RULE = check
