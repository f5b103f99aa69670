"""A0205: every count and value the CSV claims equals its recomputation.

What it checks: per row, `observed_ids` (lines with an ID) and `quality_value` (within 1e-4,
the CSV's rounding; an empty cell on a row that claims `corpus_accepted` false is "not
recorded", A8.3) against the output file; and the booleans `ids_match`, `format_valid`,
`corpus_accepted` when the row says false but the recomputation says true (an overstated
`true` is reported by A0201, A0202, A0203 or A0204, which say why).
Reads: every output line's `id` and `label`; `corpus/references.jsonl`;
`corpus/expected_ids.txt`; manifest `/quality_rule`, `/task/classes`; CSV `observed_ids`,
`quality_value`, `ids_match`, `format_valid`, `corpus_accepted`.
Why it matters: A2.5: line counts and flags prove nothing by themselves; a reviewer can only
trust what the auditor recomputes from the raw files.
Example: row 3 claims `quality_value` 0.91 and the outputs give 0.8733.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.facts.passes import rows_with_stats
from auditor.protocols.a.facts.quality import QUALITY_ABS_TOL
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0205",
    title="CSV claims equal recomputed values",
    protocol_ref="A2.5",
    severity="error",
    requires=("outputs", "expected_ids", "references", "manifest", "results"),
    fix=(
        "Find what changed after the run (the row or the output file); re-run rather than "
        "edit either."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    r = rows_with_stats(view)
    for row, claim, got, f in (
        r.filter(pl.col("observed_ids") != pl.col("re_observed_ids"))
        .select("row", "observed_ids", "re_observed_ids", "file")
        .iter_rows()
    ):
        yield RULE.finding(
            "observed_ids differs from the lines with an ID in the output file",
            artifact=RESULTS,
            row=row,
            observed=claim,
            expected=got,
            evidence={"field": "observed_ids", "output": f},
        )
    qv, qr = pl.col("quality_value"), pl.col("re_quality_value")
    # Both empty is agreement (no usable output, honestly not recorded); one empty is not,
    # except an empty cell on a row that claims no acceptance: a failed pass whose metric
    # was not recorded (A8.3: empty is "not recorded") hides nothing.
    unclaimed = qv.is_null() & qr.is_not_null() & pl.col("corpus_accepted").not_()
    wrong_q = (
        pl.when(unclaimed)
        .then(False)
        .when(qv.is_null() | qr.is_null())
        .then(qv.is_null() != qr.is_null())
        .otherwise((qv - qr).abs() > QUALITY_ABS_TOL)
    )
    for row, claim, got, f in (
        r.filter(wrong_q).select("row", "quality_value", "re_quality_value", "file").iter_rows()
    ):
        yield RULE.finding(
            "quality_value differs from the metric recomputed from the outputs",
            artifact=RESULTS,
            row=row,
            observed=claim,
            expected=None if got is None else round(got, 6),
            evidence={"field": "quality_value", "output": f},
        )
    for col, truth in (
        ("ids_match", "re_ids_match"),
        ("format_valid", "re_format_valid"),
        ("corpus_accepted", "accepted"),
    ):
        for row, f in r.filter(~pl.col(col) & pl.col(truth)).select("row", "file").iter_rows():
            yield RULE.finding(
                f"{col} is false but the recomputation says true",
                artifact=RESULTS,
                row=row,
                observed=False,
                expected=True,
                evidence={"field": col, "output": f},
            )


RULE = check
