"""A0208: every expected ID has exactly one verified reference label among the classes.

What it checks: `corpus/references.jsonl` against `corpus/expected_ids.txt` and
`task.classes`: a reference per expected ID, no duplicate, labels declared.
Reads: `corpus/references.jsonl` (`id`, `label`); `corpus/expected_ids.txt`; manifest
`/task/classes`.
Why it matters: A2.4 recomputes quality from outputs and references; a missing or undeclared
reference label silently changes the metric the corpus is accepted on.
Example: `ev-000007` has no line in `corpus/references.jsonl`.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import REFERENCES
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0208",
    title="references cover the expected IDs",
    protocol_ref="A2.4",
    severity="error",
    requires=("references", "expected_ids", "manifest"),
    fix="Give every expected ID one reference label among the declared classes, then re-run.",
)
def check(view: RunView) -> Iterator[Finding]:
    refs, exp = view.references, view.expected_ids.select("id").unique()
    missing = exp.join(refs, on="id", how="anti")["id"].sort()
    if missing.len():
        yield RULE.finding(
            f"{missing.len()} expected ID(s) have no reference label",
            artifact=REFERENCES,
            observed=missing.head(20).to_list(),
            expected="one reference per expected ID",
            evidence={"count": missing.len()},
        )
    dup = refs.filter(pl.col("id").is_duplicated()).filter(
        pl.col("line") > pl.col("line").min().over("id")
    )
    for line, i in dup.select("line", "id").head(20).iter_rows():
        yield RULE.finding(
            f"{i} has more than one reference line",
            artifact=REFERENCES,
            line=line,
            observed=i,
            expected="one reference",
        )
    bad = refs.filter(~pl.col("label").is_in(list(view.classes)))
    for line, lab in bad.select("line", "label").head(20).iter_rows():
        yield RULE.finding(
            f"reference label {lab!r} is not a declared class",
            artifact=REFERENCES,
            line=line,
            observed=lab,
            expected=list(view.classes),
        )


RULE = check
