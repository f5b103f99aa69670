"""A0608: warm passes ran in the process the announced warm-up warmed.

What it checks: each variant's warm passes ran in the process (`pid`) of its warm-up entry,
none of them in a fresh process (`fresh_process` false).
Reads: timeline `variant_id`, `phase`, `pid`, `fresh_process`.
Why it matters: A6.1: the warm-up is done so the measured passes run with compiled kernels
and filled caches; a "warm" pass in another process, or a fresh one, is a cold pass under
another name, and its time is not comparable to the warm ones.
Example: `batch-4`'s warm-up ran in pid 5000 and its warm-3 in pid 5123.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import TIMELINE
from auditor.protocols.a.facts.passes import pass_name
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0608",
    title="warm passes in the warmed process",
    protocol_ref="A6.1",
    severity="error",
    requires=("timeline",),
)
def check(view: RunView) -> Iterator[Finding]:
    t = view.timeline
    warmed = (
        t.filter(pl.col("phase") == "warmup")
        .group_by("variant_id")
        .agg(pl.col("pid").unique().alias("warm_pids"))
    )
    warm = t.filter(pl.col("phase") == "warm").join(warmed, on="variant_id", how="left")
    for w in warm.iter_rows(named=True):
        name = pass_name(w["variant_id"], "warm", w["run_index"])
        if w["fresh_process"]:
            yield RULE.finding(
                f"warm pass {name} ran in a fresh process: no warm-up warmed it",
                artifact=TIMELINE,
                line=w["line"],
                pointer="/fresh_process",
                observed=True,
                expected=False,
            )
        elif w["warm_pids"] and w["pid"] not in w["warm_pids"]:
            yield RULE.finding(
                f"warm pass {name} ran in pid {w['pid']}, not in the process "
                f"its warm-up warmed ({', '.join(map(str, w['warm_pids']))})",
                artifact=TIMELINE,
                line=w["line"],
                pointer="/pid",
                observed=w["pid"],
                expected=w["warm_pids"],
            )


RULE = check
