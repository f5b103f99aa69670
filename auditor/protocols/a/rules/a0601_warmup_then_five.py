"""A0601: the announced warm-up is done, then five measured warm passes per variant.

What it checks: `manifest.warm_passes_per_variant` is at least 5; every declared variant has
exactly that many warm rows, numbered 1..n; every row's `warmup_iterations` equals the
manifest's; the timeline has the variant's warm-up block with that many iterations, before
its first warm pass.
Reads: manifest `/warm_passes_per_variant`, `/warmup_iterations`, `/variants`; CSV `phase`,
`run_index`, `warmup_iterations`; timeline `phase`, `iterations`, `order_index`.
Why it matters: A6.1: without the announced warm-up the first "warm" pass still pays for
compilation and caches; with fewer than five passes the spread cannot be seen.
Example: variant `batch-4` has four warm rows, or its warm-up entry comes after warm pass 1.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import polars as pl

import schemas
from auditor.model import Finding
from auditor.protocols.a.artifacts import MANIFEST, RESULTS, TIMELINE
from auditor.protocols.a.subject import variant_subject
from auditor.protocols.a.view import RunView
from auditor.rule import rule

WARM_PASSES = schemas.convention("A", "warm_passes_per_variant")


@rule(
    code="A0601",
    title="warm-up then five warm passes",
    protocol_ref="A6.1",
    severity="error",
    requires=("manifest", "results", "timeline"),
    fix="Run the announced warm-up, then five measured warm passes per variant.",
)
def check(view: RunView) -> Iterator[Finding]:
    m = view.manifest
    n_warm, warmup = m["warm_passes_per_variant"], m["warmup_iterations"]
    if n_warm < WARM_PASSES:
        yield RULE.finding(
            "fewer than five warm passes per variant are planned",
            artifact=MANIFEST,
            pointer="/warm_passes_per_variant",
            observed=n_warm,
            expected=f">= {WARM_PASSES}",
        )
    warm = view.results.filter(pl.col("phase") == "warm")
    for v in [x["variant_id"] for x in m["variants"]]:
        runs = sorted(warm.filter(pl.col("variant_id") == v)["run_index"].to_list())
        if runs != list(range(1, n_warm + 1)):
            yield RULE.finding(
                f"variant {v} has warm passes {runs}",
                artifact=RESULTS,
                observed=runs,
                expected=list(range(1, n_warm + 1)),
                subject=variant_subject(v),
            )
        tl = view.timeline.filter(pl.col("variant_id") == v)
        block = tl.filter(pl.col("phase") == "warmup")
        first_warm = cast(int | None, tl.filter(pl.col("phase") == "warm")["order_index"].min())
        if warmup > 0 and block.height == 0:
            yield RULE.finding(
                f"variant {v} has no warm-up entry",
                artifact=TIMELINE,
                observed="none",
                expected=f"{warmup} iterations",
                subject=variant_subject(v),
            )
        for line, it, oi in block.select("line", "iterations", "order_index").iter_rows():
            if it != warmup:
                yield RULE.finding(
                    f"variant {v} warmed up {it} iterations, not the announced {warmup}",
                    artifact=TIMELINE,
                    line=line,
                    observed=it,
                    expected=warmup,
                )
            if first_warm is not None and oi > first_warm:
                yield RULE.finding(
                    f"variant {v}'s warm-up ran after its first warm pass",
                    artifact=TIMELINE,
                    line=line,
                    observed=oi,
                    expected=f"< {first_warm}",
                )
    bad = view.results.filter(pl.col("warmup_iterations") != warmup)
    for row, got in bad.select("row", "warmup_iterations").iter_rows():
        yield RULE.finding(
            "warmup_iterations differs from the announced warm-up",
            artifact=RESULTS,
            row=row,
            observed=got,
            expected=warmup,
        )


RULE = check
