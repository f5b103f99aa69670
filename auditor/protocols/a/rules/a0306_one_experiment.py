"""A0306: one `experiment_id` throughout the run.

What it checks: every row's `experiment_id`, and `claims.json`'s, equal the manifest's.
Reads: manifest `/experiment_id`; CSV `experiment_id`; claims `/experiment_id`.
Why it matters: A3.1 and A3.2: variants are compared within one experiment; studying another
factor is a separate experiment with its own quality control. Rows of another experiment
mixed into the table compare passes that were not planned together.
Example: rows 13-18 say `exp-precision` in a run declared as `exp-batch`.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import CLAIMS, RESULTS
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0306",
    title="one experiment throughout",
    protocol_ref="A3.2",
    severity="error",
    requires=("manifest", "results"),
)
def check(view: RunView) -> Iterator[Finding]:
    want = view.manifest["experiment_id"]
    bad = view.results.filter(pl.col("experiment_id") != want)
    for row, got in bad.select("row", "experiment_id").head(20).iter_rows():
        yield RULE.finding(
            "experiment_id differs from the manifest's: a row of another experiment",
            artifact=RESULTS,
            row=row,
            observed=got,
            expected=want,
            evidence={"field": "experiment_id"},
        )
    claims = view.claims
    if claims is not None and claims["experiment_id"] != want:
        yield RULE.finding(
            "claims.json is about another experiment",
            artifact=CLAIMS,
            pointer="/experiment_id",
            observed=claims["experiment_id"],
            expected=want,
        )


RULE = check
