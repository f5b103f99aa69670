"""A1001: a failed pass is an observed failure, never a time of 0.

What it checks: no row has `elapsed_seconds` 0, and no timeline entry of a pass that ended in
`oom` or `error` records a time of 0 (empty, "not recorded", is allowed; the time until
failure is better).
Reads: CSV `elapsed_seconds`; timeline `status`, `elapsed_seconds`.
Why it matters: A10.3: a configuration that runs out of memory did not run in no time; a 0
makes the failed configuration the fastest in any summary.
Example: the `batch-32/warm-1` row, status oom, with `elapsed_seconds` 0.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS, TIMELINE
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A1001",
    title="failure never a time of 0",
    protocol_ref="A10.3",
    severity="error",
    requires=("results",),
    fix="Record a failed pass as failed, with its time to failure, never as 0 s.",
)
def check(view: RunView) -> Iterator[Finding]:
    for row, v, p, r in (
        view.results.filter(pl.col("elapsed_seconds") == 0)
        .select("row", "variant_id", "phase", "run_index")
        .iter_rows()
    ):
        yield RULE.finding(
            f"pass {v}/{p}-{r} has a time of 0 seconds",
            artifact=RESULTS,
            row=row,
            observed=0,
            expected="the time until failure, or empty",
        )
    if view.timeline is not None:
        t = view.timeline.filter((pl.col("status") != "ok") & (pl.col("elapsed_seconds") == 0))
        for line, status in t.select("line", "status").iter_rows():
            yield RULE.finding(
                f"a pass that ended in {status} records 0 seconds",
                artifact=TIMELINE,
                line=line,
                observed=0,
                expected="the time until failure, or null",
            )


RULE = check
