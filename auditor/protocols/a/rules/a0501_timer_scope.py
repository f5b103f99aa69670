"""A0501: each duration fits the announced timer scope and the pass's wall-clock window.

What it checks: the manifest announces the timer scope (`full_chain` or `processing_only`,
schema), and each row's `elapsed_seconds` is no longer than its timeline entry's window
(`ended_at - started_at`, 1 ms slack).
Why it matters: A5.1: a timer that claims more time than the pass lasted does not measure the
announced scope (it may include loading or a neighbouring pass).
Example: row 3 says 4.2 s while the timeline shows the pass ran from 09:00:01 to 09:00:03.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.derive import KEY
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(code="A0501", title="duration within the timer's scope", protocol_ref="A5.1",
      severity="error", requires=("results", "timeline"),
      fix=("Time exactly the announced scope (start and stop the timer around the pass only) and "
           "re-run."))
def check(view: RunView) -> Iterator[Finding]:
    t = view.timeline.select(*KEY, ((pl.col("ended") - pl.col("started")).dt.total_microseconds()
                                    / 1e6).alias("window"))
    r = view.results.join(t, on=KEY, how="inner").filter(
        pl.col("elapsed_seconds") > pl.col("window") + 1e-3)
    for row, got, window in r.select("row", "elapsed_seconds", "window").iter_rows():
        yield RULE.finding("elapsed_seconds is longer than the pass lasted in the timeline",
                           artifact=RESULTS, row=row, observed=got,
                           expected=f"<= {window:.6f} s", timer_scope=view.manifest.get(
                               "timer_scope") if view.manifest else None)


RULE = check
