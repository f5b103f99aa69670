"""A0603: every raw duration is kept, as measured.

What it checks: each row's `elapsed_seconds` equals its timeline entry's `elapsed_seconds`
(1 ms slack for rounding; the case "plus the loading time" is A0502's), and a pass that
completed (`status` ok) has a duration.
Reads: CSV `elapsed_seconds`; timeline `elapsed_seconds`, `load_seconds`, `status`.
Why it matters: A6.3: every raw duration is kept; a CSV time that differs from the one the
timer recorded (rounded, replaced by a mean, "cleaned") is not a raw observation.
Example: the timeline records 1.0421 s for `batch-1/warm-2` and the row says 1.00.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.facts.passes import KEY
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0603",
    title="raw durations kept",
    protocol_ref="A6.3",
    severity="error",
    requires=("results", "timeline"),
    fix="Write the timer's raw duration for every pass; never round, average or clean it.",
)
def check(view: RunView) -> Iterator[Finding]:
    t = view.timeline.select(
        *KEY,
        pl.col("elapsed_seconds").alias("t_elapsed"),
        pl.col("load_seconds").fill_null(0.0),
        "status",
    )
    r = view.results.join(t, on=KEY, how="inner")
    e, te = pl.col("elapsed_seconds"), pl.col("t_elapsed")
    plus_load = (pl.col("load_seconds") > 0) & ((e - te - pl.col("load_seconds")).abs() <= 1e-3)
    differs = (e.is_not_null() & te.is_not_null() & ((e - te).abs() > 1e-3) & ~plus_load) | (
        e.is_null() != te.is_null()
    )
    for row, got, want in (
        r.filter(differs).select("row", "elapsed_seconds", "t_elapsed").iter_rows()
    ):
        yield RULE.finding(
            "elapsed_seconds differs from the duration the timer recorded",
            artifact=RESULTS,
            row=row,
            observed=got,
            expected=want,
        )
    none = r.filter((pl.col("status") == "ok") & e.is_null() & te.is_null())
    for row in none["row"]:
        yield RULE.finding(
            "a completed pass has no duration",
            artifact=RESULTS,
            row=row,
            observed=None,
            expected="seconds",
            missing_evidence=True,
        )


RULE = check
