"""A0902: the same package cost on every row, never multiplied or accumulated over passes.

What it checks: every row's `package_total_usd_minor` equals the first row's.
Reads: CSV `package_total_usd_minor`.
Why it matters: A9.3: one package is one expense; five repetitions of a corpus do not cost
five packages, and a running total over passes invents spending.
Example: rows 1..5 with 123456, 246912, 370368, ...: the package summed per pass.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0902",
    title="package cost not accumulated",
    protocol_ref="A9.3",
    severity="error",
    requires=("results",),
    fix="Write the package cost once per package, never summed over passes.",
)
def check(view: RunView) -> Iterator[Finding]:
    r = view.results.sort("row")
    if r.height < 2:
        return
    first = r["package_total_usd_minor"][0]
    col = pl.col("package_total_usd_minor")
    bad = r.filter(col.ne_missing(first))
    for row, got in bad.select("row", "package_total_usd_minor").iter_rows():
        yield RULE.finding(
            "package_total_usd_minor differs from the first row's: the package is one expense",
            artifact=RESULTS,
            row=row,
            observed=got,
            expected=first,
        )


RULE = check
