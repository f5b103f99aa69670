"""A0501: each duration fits the announced timer scope and the pass's wall-clock window.

What it checks: each row's `elapsed_seconds` against its timeline entry's window
(`ended_at - started_at`, read to the nanosecond from any RFC 3339 form): never longer
(1 ms slack), and, when the manifest announces `full_chain` (the timer covers reading,
tokenization, classification and writing, which is all the window holds but closing the
output file), not shorter than the window by more than `FULL_CHAIN_SLACK_S` plus
`FULL_CHAIN_SLACK_FRACTION` of it. With `processing_only` the timer sums the model calls
alone, so any positive duration within the window fits.
Reads: CSV `elapsed_seconds`; timeline `started_at`, `ended_at`; manifest `/timer_scope`.
Why it matters: A5.1: a timer that claims more time than the pass lasted does not measure the
announced scope (it may include loading or a neighbouring pass); a full-chain time well
below its window leaves out part of the chain it claims to cover.
Example: row 3 says 4.2 s while the timeline shows the pass ran from 09:00:01 to 09:00:03;
or a full-chain pass of a 2.0 s window claims 1.1 s.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.facts.passes import KEY
from auditor.protocols.a.facts.timing import pass_windows
from auditor.protocols.a.view import RunView
from auditor.rule import rule

SLACK_S = 1e-3
"""Timer and clock read a few microseconds apart; the CSV may round to the millisecond."""
FULL_CHAIN_SLACK_S = 0.02
FULL_CHAIN_SLACK_FRACTION = 0.02
"""A full-chain window holds the timed chain plus closing the output file and reading the
clock: a few milliseconds on a loaded machine."""


@rule(
    code="A0501",
    title="duration within the timer's scope",
    protocol_ref="A5.1",
    severity="error",
    requires=("results", "timeline"),
    fix=(
        "Time exactly the announced scope (start and stop the timer around the pass only) and "
        "re-run."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    scope = view.manifest.get("timer_scope") if view.manifest else None
    r = view.results.join(pass_windows(view).select(*KEY, "window"), on=KEY, how="inner")
    e, w = pl.col("elapsed_seconds"), pl.col("window")
    for row, got, window in (
        r.filter(e > w + SLACK_S).select("row", "elapsed_seconds", "window").iter_rows()
    ):
        yield RULE.finding(
            "elapsed_seconds is longer than the pass lasted in the timeline",
            artifact=RESULTS,
            row=row,
            observed=got,
            expected=f"<= {window:.6f} s",
            evidence={"timer_scope": scope},
        )
    if scope != "full_chain":
        return
    short = e < w - FULL_CHAIN_SLACK_S - FULL_CHAIN_SLACK_FRACTION * w
    for row, got, window in r.filter(short).select("row", "elapsed_seconds", "window").iter_rows():
        floor = window - FULL_CHAIN_SLACK_S - FULL_CHAIN_SLACK_FRACTION * window
        yield RULE.finding(
            "elapsed_seconds is shorter than its full-chain window allows: the "
            "timer left part of the announced chain out",
            artifact=RESULTS,
            row=row,
            observed=got,
            expected=f">= {floor:.6f} s (window {window:.6f} s)",
            evidence={"timer_scope": scope},
        )


RULE = check
