"""A0101: the quality rule was fixed before measuring and every row applies it.

What it checks: each row's `quality_metric`, `quality_threshold` and `quality_tolerance` equal
the manifest's `quality_rule`, and the manifest's `declared_at` is before the first pass of
the timeline started.
Reads: manifest `/quality_rule` (`metric`, `threshold`, `tolerance`), `/declared_at`; CSV
`quality_metric`, `quality_threshold`, `quality_tolerance`; timeline `started_at`.
Why it matters: A1.1 fixes the metric, threshold and tolerance before any measurement; a
threshold lowered afterwards, or one row judged by another metric, turns acceptance into a
choice made after seeing the numbers.
Example: the manifest declares macro_f1 >= 0.80 and row 7 says `quality_threshold` 0.75.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import cast

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import MANIFEST, RESULTS, TIMELINE
from auditor.protocols.a.facts.quality import EPS
from auditor.protocols.a.view import RunView
from auditor.readers import timestamps
from auditor.rule import rule


@rule(
    code="A0101",
    title="quality rule declared before measuring",
    protocol_ref="A1.1",
    severity="error",
    requires=("manifest", "results"),
    fix=(
        "Declare metric, threshold and tolerance in the manifest before measuring, and judge "
        "every row by them."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    qr = view.manifest["quality_rule"]
    declared = {
        "quality_metric": qr["metric"],
        "quality_threshold": qr["threshold"],
        "quality_tolerance": qr["tolerance"],
    }
    for col, want in declared.items():
        c = pl.col(col)
        bad = c != want if isinstance(want, str) else (c - want).abs() > EPS
        for row, got in view.results.filter(bad.fill_null(True)).select("row", col).iter_rows():
            yield RULE.finding(
                f"{col} differs from the quality rule declared in the manifest",
                artifact=RESULTS,
                row=row,
                observed=got,
                expected=want,
                evidence={"field": col},
            )
    if view.timeline is not None and view.timeline.height:
        first = cast(datetime | None, view.timeline["started"].min())
        declared_at = timestamps.column([view.manifest["declared_at"]])[0]
        if declared_at is not None and first is not None and declared_at > first:
            yield RULE.finding(
                "the declaration is dated after the first pass started",
                artifact=MANIFEST,
                pointer="/declared_at",
                observed=view.manifest["declared_at"],
                expected=f"before {first.isoformat()} ({TIMELINE})",
            )


RULE = check
