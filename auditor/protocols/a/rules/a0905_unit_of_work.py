"""A0905: the unit of useful work is fixed and the same for every variant.

What it checks: every row's `expected_ids` equals the number of IDs in
`corpus/expected_ids.txt` (the corpus the manifest's `task.unit_of_work` names).
Reads: CSV `expected_ids`; `corpus/expected_ids.txt`.
Why it matters: A9.4: the unit of useful work is fixed before comparing and is the same for
every variant; a variant measured on a smaller corpus looks cheaper per corpus.
Example: the list has 1,000 IDs and the rows of `batch-8` say `expected_ids` 500.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import EXPECTED, RESULTS
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0905",
    title="same unit of work",
    protocol_ref="A9.4",
    severity="error",
    requires=("results", "expected_ids"),
    fix="Measure every variant on the same unit of work (the same corpus).",
)
def check(view: RunView) -> Iterator[Finding]:
    n = view.expected_ids["id"].n_unique()  # the distinct IDs: a duplicate line is A0207's
    bad = view.results.filter(pl.col("expected_ids") != n)
    for row, got in bad.select("row", "expected_ids").iter_rows():
        yield RULE.finding(
            "expected_ids differs from the evaluation corpus every variant must process",
            artifact=RESULTS,
            row=row,
            observed=got,
            expected=n,
            evidence={"expected_file": EXPECTED},
        )


RULE = check
