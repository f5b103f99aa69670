"""A0502: loading, cold and warm durations are kept apart.

What it checks: no row's `elapsed_seconds` is its timeline entry's `elapsed_seconds` plus the
process's `load_seconds` (loading added into a pass), and no warm pass carries a loading
time (a warm pass loads nothing).
Reads: CSV `elapsed_seconds`; timeline `phase`, `elapsed_seconds`, `load_seconds`.
Why it matters: A5.2: loading, the first pass and warm passes are separate phases; adding the
loading time to the cold pass or mixing phases in one duration makes the figures
incomparable.
Example: timeline says load 1.25 s and pass 2.50 s; the row says 3.75 s.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS, TIMELINE
from auditor.protocols.a.facts.passes import KEY
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0502",
    title="phases kept separate",
    protocol_ref="A5.2",
    severity="error",
    requires=("results", "timeline"),
    fix=(
        "Time loading, the cold pass and warm passes apart; never add one phase's time to another."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    t = view.timeline.select(
        *KEY, pl.col("elapsed_seconds").alias("t_elapsed"), "load_seconds", "line"
    )
    r = view.results.join(t, on=KEY, how="inner")
    mixed = r.filter(
        (pl.col("load_seconds") > 0)
        & ((pl.col("elapsed_seconds") - pl.col("t_elapsed") - pl.col("load_seconds")).abs() <= 1e-3)
    )
    for row, got, el, ld in mixed.select(
        "row", "elapsed_seconds", "t_elapsed", "load_seconds"
    ).iter_rows():
        yield RULE.finding(
            "elapsed_seconds adds the loading time to the pass",
            artifact=RESULTS,
            row=row,
            observed=got,
            expected=el,
            evidence={"load_seconds": ld},
        )
    warm_load = view.timeline.filter((pl.col("phase") == "warm") & (pl.col("load_seconds") > 0))
    for line, ld in warm_load.select("line", "load_seconds").iter_rows():
        yield RULE.finding(
            "a warm pass carries a loading time",
            artifact=TIMELINE,
            line=line,
            observed=ld,
            expected=None,
        )


RULE = check
