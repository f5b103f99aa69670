"""A0602: passes ran in the order drawn in advance (or alternating), and the times agree.

What it checks: every timeline entry sits at its `order_index` in `manifest.pass_order` (same
variant, phase and run), the entries' times follow that order (each starts after the previous
one ended, and none ends after the manifest's `completed_at`), and with several variants the
warm passes are not run in blocks (all of one variant, then the next), whatever the manifest's
`pass_order_method` says: the order itself is the evidence, and a block order neither
alternates nor spreads drift, even when the method honestly calls it "sequential".
Reads: manifest `/pass_order`, `/pass_order_method`, `/completed_at`; timeline `order_index`,
`variant_id`, `phase`, `run_index`, `started_at`, `ended_at`.
Why it matters: A6.2: alternating or pre-drawn order spreads drift (heat, clocks, caches) over
the variants; an order recorded but not followed, or times that contradict it, means the
recorded order is not what ran.
Example: pass_order puts `batch-4/warm-1` at index 5 and the timeline runs it at index 7; or
warm-3 starts before warm-2 ended.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime
from typing import cast

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import MANIFEST, TIMELINE
from auditor.protocols.a.facts.passes import KEY
from auditor.protocols.a.view import RunView
from auditor.readers import timestamps
from auditor.rule import rule


@rule(
    code="A0602",
    title="pass order recorded and followed",
    protocol_ref="A6.2",
    severity="error",
    requires=("manifest", "timeline"),
    fix=(
        "Draw or alternate the pass order in advance, record it, and run the passes in that order."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    m = view.manifest
    planned = pl.DataFrame(
        m["pass_order"],
        schema={
            "order_index": pl.Int64,
            "variant_id": pl.String,
            "phase": pl.String,
            "run_index": pl.Int64,
        },
    ).rename({k: f"p_{k}" for k in KEY})
    t = view.timeline.sort("order_index").join(planned, on="order_index", how="left")
    off = t.filter(
        pl.any_horizontal([(pl.col(k) != pl.col(f"p_{k}")).fill_null(True) for k in KEY])
    )
    for r in off.iter_rows(named=True):
        yield RULE.finding(
            f"order_index {r['order_index']} ran another pass than planned",
            artifact=TIMELINE,
            line=r["line"],
            observed=f"{r['variant_id']}/{r['phase']}-{r['run_index']}",
            expected=None
            if r["p_variant_id"] is None
            else f"{r['p_variant_id']}/{r['p_phase']}-{r['p_run_index']}",
        )
    back = t.filter(pl.col("started") < pl.col("ended").shift(1))
    for line, oi in back.select("line", "order_index").iter_rows():
        yield RULE.finding(
            f"pass at order_index {oi} started before the previous one ended",
            artifact=TIMELINE,
            line=line,
            observed=oi,
            expected="times increasing with order_index",
        )
    done = (
        timestamps.column([m["completed_at"]])[0]
        if isinstance(m.get("completed_at"), str)
        else None
    )
    last = cast(datetime | None, view.timeline["ended"].max())
    if done is not None and last is not None and done < last:
        yield RULE.finding(
            "the run is declared complete before its last pass ended",
            artifact=MANIFEST,
            pointer="/completed_at",
            observed=m["completed_at"],
            expected=f"at or after {last.isoformat()} ({TIMELINE})",
        )
    warm = [
        p["variant_id"]
        for p in sorted(m["pass_order"], key=lambda p: p["order_index"])
        if p["phase"] == "warm"
    ]
    switches = sum(a != b for a, b in itertools.pairwise(warm))
    n_variants = len(set(warm))
    if n_variants > 1 and switches == n_variants - 1:
        method = m.get("pass_order_method")
        said = f" (the recorded method: {method!r})" if isinstance(method, str) else ""
        yield RULE.finding(
            "warm passes run in blocks, one variant after the other" + said,
            artifact=MANIFEST,
            pointer="/pass_order",
            observed="blocked",
            expected="alternating or drawn in advance",
        )


RULE = check
