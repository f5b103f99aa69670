"""The power frame every power reader returns, built from `schemas/power-samples.frame.json`,
and the steps several readers share: conforming columns to the schema, saying what each
reading is (`describe`: counter or interval, energy or cross-check, instrument, the devices
it includes, source rank, averaging), deriving intervals from consecutive timestamps, and
reporting time going backwards or repeated samples.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

import polars as pl

from auditor.readers._common import FaultLog, frame_schema

if TYPE_CHECKING:
    from auditor.readers.identity import Identity


class PowerMeta(TypedDict, total=False):
    """What a power reader says about the file beside its frame (`Read.meta`): the keys
    protocols and `audit evidence` read, each documented in schemas/power-samples.frame.json
    (`meta`). A reader writes only the keys its format gives; further descriptive keys of its
    tool are read by no protocol (tests/readers/test_meta_contract.py)."""

    tool: str
    format: str
    units: list[str]
    timestamps: bool
    markers: list[dict[str, Any]]
    unavailable: list[dict[str, Any]]
    wraps: int
    notes: list[str]
    timezone_assumed: str
    local_utc_offset: str | None
    identity: Identity
    network: pl.DataFrame


def schema() -> pl.Schema:
    """The polars schema of the power frame, column order included."""
    return frame_schema("power_samples")


def from_rows(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """A power frame from row dicts (for formats with a handful of samples); missing keys
    are null. `start`/`end` may be aware datetimes in any zone."""
    s = schema()
    cols = {name: [r.get(name) for r in rows] for name in s}
    return pl.DataFrame(cols, schema=s)


def conform(df: pl.DataFrame) -> pl.DataFrame:
    """`df` with exactly the frame's columns, in order and of the right types (absent ones
    null), for readers that build columns with polars."""
    s = schema()
    return df.select(
        [(pl.col(n) if n in df.columns else pl.lit(None)).cast(t).alias(n) for n, t in s.items()]
    )


def empty() -> pl.DataFrame:
    return pl.DataFrame(schema=schema())


INCLUDES: dict[str, str] = {
    "cpu": "cpu",
    "gpu": "gpu",
    "ane": "ane",
    "npu": "npu",
    "combined": "ane,cpu,gpu,npu",
    "package": "ane,cpu,npu",
    "ppt": "cpu,npu",
    "psys": "cpu,gpu,npu",
}
"""The devices a domain's reading holds unless its reader says otherwise: a CPU package
holds the CPU and an on-package NPU or Neural Engine, not a discrete GPU; a combined or
whole-system reading holds them all; a part (dram, core, rail, other) holds none of them."""


MAX_WATTS = 100_000.0
"""A reading above this (100 kW; a server of eight accelerators draws a tenth of it) is not a
machine's power: a unit slip, a corrupt cell or a 400-digit number, never a figure."""


def screen(df: pl.DataFrame, log: FaultLog, *, what: str = "reading") -> pl.DataFrame:
    """DF without the readings whose `watts` or `energy_j` is not a finite, non-negative,
    plausible figure (at most `MAX_WATTS`, and that power over the reading's interval), each
    a fault naming its line and source: `type` for a non-finite value, `units` for a
    negative or absurd one. A battery's negative charge rate is kept: it is the battery
    discharging (the machine on battery), a reading of the power state, never summed as a
    draw. One bad sample can never make a window's energy infinite or negative; a missing
    value (null) is not a fault here."""
    if df.is_empty():
        return df
    span = (
        pl.when(pl.col("interval_s").is_finite() & (pl.col("interval_s") > 0))
        .then(pl.col("interval_s"))
        .otherwise(86_400.0)
    )
    if "kind" in df.columns:
        # a counter's delta over two reads close together spans the counter's own update
        # period (NVML: up to ~100 ms): its energy is bounded over at least a second
        span = (
            pl.when(pl.col("kind") == "counter")
            .then(pl.max_horizontal(span, pl.lit(1.0)))
            .otherwise(span)
        )

    def bad(col: str, limit: pl.Expr) -> pl.Expr:
        v = pl.col(col)
        return v.is_not_null() & (~v.is_finite() | (v < 0) | (v > limit))

    counter = (pl.col("kind") == "counter") if "kind" in df.columns else pl.lit(False)
    # a battery's charge rate is negative while it discharges: a reading, kept (never summed)
    discharge = (
        (pl.col("domain") == "battery")
        & pl.col("watts").is_finite()
        & (pl.col("watts") < 0)
        & (pl.col("watts") > -MAX_WATTS)
    )
    flagged = df.with_columns(
        bad_w=bad("watts", pl.lit(MAX_WATTS)) & ~counter & ~discharge,
        bad_j=bad("energy_j", MAX_WATTS * span * 1.01),
    )
    drop = pl.col("bad_w") | pl.col("bad_j")
    for r in flagged.filter(drop).iter_rows(named=True):
        col = "watts" if r["bad_w"] else "energy_j"
        value = r[col]
        unit = "W" if col == "watts" else "J"
        if not math.isfinite(value):
            kind, why = "type", "is not a finite number"
        elif value < 0:
            kind, why = "units", "is negative"
        else:
            kind, why = (
                "units",
                (
                    f"is over {MAX_WATTS:,.0f} W"
                    if col == "watts"
                    else f"is more than {MAX_WATTS:,.0f} W over its interval"
                ),
            )
        message = (
            f"{r['source']}: this {what}'s {'power' if col == 'watts' else 'energy'} "
            f"({value:g} {unit}) {why}: left out, never summed."
        )
        log.add("error", message, kind=kind, line=r["line"], field=r["source"], value=value)
    return df.filter(~flagged.select(drop).to_series())


def describe(
    df: pl.DataFrame,
    log: FaultLog,
    *,
    instrument: str | pl.Expr,
    includes: dict[str, str] | None = None,
    kind: str | pl.Expr = "interval",
    role: str | pl.Expr = "energy",
    rank: int | pl.Expr = 0,
    averaging_s: float | pl.Expr | None = None,
) -> pl.DataFrame:
    """DF with the columns that say what each reading is (schemas/power-samples.frame.json):
    INSTRUMENT, the devices each domain INCLUDES (`INCLUDES`, overridden per domain, or a
    column `includes` DF already has for a reading that differs from its domain's), KIND,
    ROLE, source RANK and AVERAGING_S, each a value or an expression over DF's columns.
    Implausible readings are screened out first (`screen`, faults in LOG): every power
    reader describes its frame here, so none can pass one on."""
    table = {**INCLUDES, **(includes or {})}

    def lit(v: object) -> pl.Expr:
        return v if isinstance(v, pl.Expr) else pl.lit(v)

    by_domain = pl.col("domain").replace_strict(table, default="", return_dtype=pl.String)
    own = pl.coalesce(pl.col("includes"), by_domain) if "includes" in df.columns else by_domain
    return screen(
        conform(
            df.with_columns(
                instrument=lit(instrument),
                kind=lit(kind),
                role=lit(role),
                rank=lit(rank).cast(pl.Int64),
                averaging_s=lit(averaging_s).cast(pl.Float64),
                includes=own,
            )
        ),
        log,
    )


def with_point_intervals(
    df: pl.DataFrame, by: Sequence[str] = ("source", "device")
) -> pl.DataFrame:
    """For tools that log one time per reading: interval = time since the previous reading
    of the same series (file order), start = end - interval. A series' first reading, and
    one whose time does not move forward, gets no interval (see `order_faults`)."""
    prev = pl.col("end").shift(1).over(list(by), order_by="line")
    gap = (pl.col("end") - prev).dt.total_microseconds() / 1e6
    interval = pl.when(gap > 0).then(gap).otherwise(None)
    return df.with_columns(interval_s=interval).with_columns(
        start=pl.col("end") - pl.duration(microseconds=(pl.col("interval_s") * 1e6).round())
    )


def order_faults(
    df: pl.DataFrame, log: FaultLog, *, by: Sequence[str] = ("device",), what: str = "sample"
) -> None:
    """A warning for each sample whose time goes back (kind `order`) or stands still (kind
    `repeat`: a tool that reads a value twice within one update) against the previous sample
    of the same series: the file was edited, merged or the clock jumped. A sample is one
    `line` (with the `by` columns): pass one row per sample where a sample spans lines."""
    samples = (
        df.filter(pl.col("end").is_not_null())
        .unique(subset=["line", *by], keep="first", maintain_order=True)
        .sort("line")
    )
    if samples.height < 2:
        return
    prev = pl.col("end").shift(1)
    prev = prev.over(list(by), order_by="line") if by else prev
    bad = samples.with_columns(prev=prev).filter(pl.col("end") <= pl.col("prev"))
    for r in bad.iter_rows(named=True):
        where = ", ".join(f"{k} {r[k]}" for k in by if r[k] is not None)
        goes_back = r["end"] < r["prev"]
        back = "goes back" if goes_back else "repeats the previous time"
        log.warning(
            f"This {what}{f' ({where})' if where else ''} {back}: "
            f"{r['end']:%Y-%m-%d %H:%M:%S.%f} after {r['prev']:%Y-%m-%d %H:%M:%S.%f}.",
            kind="order" if goes_back else "repeat",
            line=r["line"],
        )


def drop_repeats(
    df: pl.DataFrame, log: FaultLog, *, key: Iterable[str] = ("end", "device"), what: str = "row"
) -> pl.DataFrame:
    """Keep the first of readings logged twice for the same key (time, device, source): a
    repeated row would count twice in every average. Each repeat is reported. The frame
    comes back in line order."""
    keys = [*key, "source"]
    df = df.sort("line", maintain_order=True)
    repeat = pl.col("end").is_not_null() & ~pl.struct(keys).is_first_distinct()
    dup = df.filter(repeat)
    if dup.is_empty():
        return df
    first = df.group_by(list(key)).agg(pl.col("line").min().alias("first"))
    per_line = dup.group_by("line", maintain_order=True).agg(pl.col(k).first() for k in key)
    for r in per_line.join(first, on=list(key), how="left", nulls_equal=True).iter_rows(named=True):
        log.warning(
            f"This {what} repeats the time and device of line {r['first']}: its "
            "readings are left out.",
            kind="duplicate",
            line=r["line"],
        )
    return df.filter(~repeat)


def snapshot_warning(df: pl.DataFrame, log: FaultLog) -> None:
    """A `coverage` warning when no device has two timed samples: the file shows readings,
    not a trace that can cover a measurement window."""
    timed = df.filter(pl.col("end").is_not_null())
    if timed.is_empty():
        return
    if timed.group_by("device").agg(pl.col("end").n_unique().alias("n"))["n"].max() == 1:
        log.warning(
            "One sample per device: the file shows a reading, not a trace that can "
            "cover a measurement window (log repeatedly, e.g. nvidia-smi -lms, "
            "powermetrics -i).",
            kind="coverage",
        )
