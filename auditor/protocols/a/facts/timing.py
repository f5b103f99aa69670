"""The passes' durations and windows: per timeline entry its window, per variant and phase
the summaries of the raw durations of the passes that completed (A6.3: median and range,
never a p95), the per-pass table the report lists, and the ranking figures and orders a
ranking is recomputed from (A10.2)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from auditor.present import natural_key
from auditor.protocols.a.facts.passes import KEY, pass_stats, variants_accepted
from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView

PHASES = ("cold", "warm")


@per_view
def pass_windows(view: RunView) -> pl.DataFrame:
    """Per timeline entry: `line`, the key, `status`, `t_elapsed` (the timer's record) and
    `window` (ended_at - started_at, in seconds, from the RFC 3339 times to the ns)."""
    assert view.timeline is not None
    return view.timeline.select(
        "line",
        *KEY,
        "status",
        pl.col("elapsed_seconds").alias("t_elapsed"),
        ((pl.col("ended") - pl.col("started")).dt.total_nanoseconds() / 1e9).alias("window"),
    )


_SUMMARY_SCHEMA = {
    "variant_id": pl.String,
    "phase": pl.String,
    "passes": pl.UInt32,
    "median": pl.Float64,
    "min": pl.Float64,
    "max": pl.Float64,
    "mean": pl.Float64,
}


@per_view
def duration_summaries(view: RunView) -> pl.DataFrame:
    """Per variant and phase, from the raw durations of the passes that completed (CSV
    `elapsed_seconds` of the rows whose timeline status is ok): `passes`, `median`, `min`,
    `max`, `mean` (seconds). Without a CSV or a timeline, no pass is known to have
    completed: no row."""
    if view.results is None or view.timeline is None:
        return pl.DataFrame(schema=_SUMMARY_SCHEMA)
    ok = view.timeline.filter(pl.col("status") == "ok").select(KEY).unique()
    e = pl.col("elapsed_seconds")
    return (
        view.results.join(ok, on=KEY, how="semi")
        .filter(e.is_not_null())
        .group_by("variant_id", "phase")
        .agg(
            pl.len().alias("passes"),
            e.median().alias("median"),
            e.min().alias("min"),
            e.max().alias("max"),
            e.mean().alias("mean"),
        )
    )


def _status_frame(timeline: pl.DataFrame | None) -> pl.DataFrame | None:
    """Per pass of the timeline, the `status` and `pid` of its first entry."""
    if timeline is None:
        return None
    return (
        timeline.filter(pl.col("phase").is_in(list(PHASES)))
        .select(
            "variant_id",
            "phase",
            pl.col("run_index").cast(pl.Int64),
            "status",
            pl.col("pid").cast(pl.Int64),
        )
        .unique(subset=KEY, keep="first")
    )


@per_view
def pass_table(view: RunView) -> pl.DataFrame | None:
    """Every CSV row's pass, in key order: `row`, the key, `elapsed_seconds`, `notes`,
    `status` and `pid` (from its timeline entry; null without a timeline), `accepted` and
    `quality_value` (as the auditor recomputed them from its output file; null without one
    or without expected IDs). None without a CSV."""
    if view.results is None:
        return None
    df = view.results.select("row", *KEY, "elapsed_seconds", "notes").with_columns(
        pl.col("run_index").cast(pl.Int64)
    )
    status = _status_frame(view.timeline)
    if status is not None:
        df = df.join(status, on=KEY, how="left")
    else:
        df = df.with_columns(
            pl.lit(None, dtype=pl.String).alias("status"), pl.lit(None, dtype=pl.Int64).alias("pid")
        )
    if view.outputs is not None and view.expected_ids is not None:
        df = df.join(
            pass_stats(view).select(
                "variant_id",
                "phase",
                pl.col("run_index").cast(pl.Int64),
                "accepted",
                "quality_value",
            ),
            on=KEY,
            how="left",
        )
    else:
        df = df.with_columns(
            pl.lit(None, dtype=pl.Boolean).alias("accepted"),
            pl.lit(None, dtype=pl.Float64).alias("quality_value"),
        )
    return df.sort(KEY)


@dataclass(frozen=True)
class PhaseDurations:
    """One variant's passes of one phase: how many rows, how many completed with a
    duration, and the median and range of those (seconds; None when none completed)."""

    passes: int
    ok: int
    median_s: float | None
    min_s: float | None
    max_s: float | None

    @property
    def spread_share(self) -> float | None:
        """(max - min) / median of at least two completed passes; None with fewer."""
        if self.ok >= 2 and self.median_s and self.max_s is not None and self.min_s is not None:
            return (self.max_s - self.min_s) / self.median_s
        return None


@dataclass(frozen=True)
class VariantDurations:
    """A variant's durations: its cold and warm passes summarised apart (A6.3), and the
    passes that failed (their time to failure enters no summary, A6.4, A10.3)."""

    variant_id: Any
    cold: PhaseDurations
    warm: PhaseDurations
    failed: int
    """Passes whose timeline status is known and not `ok`."""


@per_view
def variant_durations(view: RunView) -> tuple[VariantDurations, ...]:
    """Per variant of the CSV, in key order, its `VariantDurations`, from `pass_table` and
    `duration_summaries`."""
    table = pass_table(view)
    if table is None:
        return ()
    summ = {
        (r["variant_id"], r["phase"]): r for r in duration_summaries(view).iter_rows(named=True)
    }
    out = []
    for passes in table.partition_by("variant_id", maintain_order=True):
        vid = passes["variant_id"][0]
        phases = {}
        for phase in PHASES:
            s = summ.get((vid, phase))
            phases[phase] = PhaseDurations(
                passes=int((passes["phase"] == phase).sum()),
                ok=int(s["passes"]) if s else 0,
                median_s=s["median"] if s else None,
                min_s=s["min"] if s else None,
                max_s=s["max"] if s else None,
            )
        failed = int(
            passes.filter(pl.col("status").is_not_null() & (pl.col("status") != "ok")).height
        )
        out.append(VariantDurations(vid, phases["cold"], phases["warm"], failed))
    return tuple(sorted(out, key=lambda d: natural_key(d.variant_id)))


def ranking_figures(view: RunView, phase: str, statistic: str) -> dict[str, float]:
    """Per accepted variant (`variants_accepted`), the STATISTIC (`median`, `min`, `max`,
    `mean`) of its PHASE durations, in seconds, from `duration_summaries`: what a ranking of
    claims.json is recomputed from. A variant with no completed pass of that phase has none."""
    accepted = variants_accepted(view)
    return {
        v: value
        for v, ph, value in duration_summaries(view)
        .select("variant_id", "phase", statistic)
        .iter_rows()
        if ph == phase and v in accepted and value is not None
    }


def ranked(figures: Mapping[str, float], order: str) -> list[str]:
    """FIGURES' variants in ORDER (`ascending`: the smallest first), equal figures by name."""
    sign = 1 if order == "ascending" else -1
    return sorted(figures, key=lambda v: (sign * figures[v], v))


@per_view
def fastest_first(view: RunView) -> tuple[str, ...]:
    """The accepted configurations (`variants_accepted`, among the CSV's variants when there
    is a CSV) by warm median, the fastest first (`ranked`); those with no completed warm
    pass last, by name."""
    configs = {d.variant_id for d in variant_durations(view)}
    accepted = sorted(v for v in variants_accepted(view) if not configs or v in configs)
    figures = ranking_figures(view, "warm", "median")
    fast = ranked({v: figures[v] for v in accepted if v in figures}, "ascending")
    return (*fast, *(v for v in accepted if v not in figures))


def basis_text(basis: str | dict[str, Any]) -> str:
    """A ranking's basis in words: a typed one (claims schema version 2) spelled out, a free
    text one (version 1) as written."""
    if isinstance(basis, str):
        return basis
    return f"{basis['statistic']} {basis['phase']} {basis['measure']}, {basis['order']}"
