"""A0607: every row has exactly one timeline entry.

What it checks: each (`variant_id`, `phase`, `run_index`) of `resultats-bruts.csv` has one
cold or warm entry in `timeline.jsonl`, no more, no fewer (an entry without its row is
A0605's).
Reads: CSV `variant_id`, `phase`, `run_index`; timeline `variant_id`, `phase`, `run_index`.
Why it matters: A6.3: every raw duration is kept where the timer recorded it; a row with no
entry has a duration nobody timed (and no status), and a pass with two entries was run twice
with one result kept.
Example: row 7 is `batch-4/warm-2` and the timeline has no such entry; or two entries are
`batch-4/warm-2`.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS, TIMELINE
from auditor.protocols.a.facts.passes import KEY, pass_name
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0607",
    title="one timeline entry per row",
    protocol_ref="A6.3",
    severity="error",
    requires=("results", "timeline"),
)
def check(view: RunView) -> Iterator[Finding]:
    entries = view.timeline.filter(pl.col("phase").is_in(["cold", "warm"]))
    for row, *key in (
        view.results.join(entries.select(KEY), on=KEY, how="anti").select("row", *KEY).iter_rows()
    ):
        yield RULE.finding(
            f"pass {pass_name(*key)} has a row but no timeline entry: its "
            "duration and status were not recorded by the timer",
            artifact=RESULTS,
            row=row,
            observed="no entry",
            expected=f"one entry in {TIMELINE}",
            missing_evidence=True,
        )
    twice = entries.filter(pl.struct(KEY).is_duplicated()).filter(
        pl.col("line") > pl.col("line").min().over(KEY)
    )
    for line, *key in twice.select("line", *KEY).iter_rows():
        yield RULE.finding(
            f"pass {pass_name(*key)} has more than one timeline entry",
            artifact=TIMELINE,
            line=line,
            observed="a second entry",
            expected="one entry per pass",
        )


RULE = check
