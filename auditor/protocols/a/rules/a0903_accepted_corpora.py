"""A0903: `accepted_unique_corpora` never exceeds the distinct corpora actually accepted.

What it checks: per variant, the distinct `corpus_revision` values with a pass the auditor
recomputes as accepted (IDs exactly once, valid format, quality rule met); no row of the
variant may claim more.
Reads: CSV `variant_id`, `corpus_revision`, `accepted_unique_corpora`; the output files,
references and expected IDs (acceptance recomputed).
Why it matters: A9.3: five repetitions of one corpus measure variability, they are not five
deliverables; counting them (or a corpus that failed) divides the package by a production
that did not happen.
Example: one corpus, five accepted warm passes, and rows saying 5.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.facts.passes import variant_accepted
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0903",
    title="accepted corpora not over-counted",
    protocol_ref="A9.3",
    severity="error",
    requires=("results", "outputs", "expected_ids", "manifest"),
    fix="Count distinct accepted corpora only, never repetitions or failed passes.",
)
def check(view: RunView) -> Iterator[Finding]:
    r = view.results.join(variant_accepted(view), on="variant_id", how="left")
    bad = r.filter(pl.col("accepted_unique_corpora") > pl.col("accepted_corpora"))
    for row, got, want in bad.select(
        "row", "accepted_unique_corpora", "accepted_corpora"
    ).iter_rows():
        yield RULE.finding(
            "accepted_unique_corpora is more than the distinct corpora recomputed as accepted",
            artifact=RESULTS,
            row=row,
            observed=got,
            expected=f"<= {want}",
        )


RULE = check
