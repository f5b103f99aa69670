"""The power frame every power reader returns, built from `schemas/power-samples.frame.json`,
and the steps several readers share: conforming columns to the schema, saying what each
reading is (`describe`: counter or interval, energy or cross-check, instrument, the devices
it includes, source rank, averaging), deriving intervals from consecutive timestamps, and
reporting time going backwards or repeated samples.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from auditor.readers._common import FaultLog, frame_schema


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
    return df.select([
        (pl.col(n) if n in df.columns else pl.lit(None)).cast(t).alias(n) for n, t in s.items()])


def empty() -> pl.DataFrame:
    return pl.DataFrame(schema=schema())


INCLUDES: dict[str, str] = {
    "cpu": "cpu", "gpu": "gpu", "ane": "ane", "npu": "npu", "combined": "ane,cpu,gpu,npu",
    "package": "ane,cpu,npu", "ppt": "cpu,npu", "psys": "cpu,gpu,npu"}
"""The devices a domain's reading holds unless its reader says otherwise: a CPU package
holds the CPU and an on-package NPU or Neural Engine, not a discrete GPU; a combined or
whole-system reading holds them all; a part (dram, core, rail, other) holds none of them."""


def describe(df: pl.DataFrame, *, instrument: str | pl.Expr,
             includes: dict[str, str] | None = None, kind: str | pl.Expr = "interval",
             role: str | pl.Expr = "energy", rank: int | pl.Expr = 0,
             averaging_s: float | pl.Expr | None = None) -> pl.DataFrame:
    """DF with the columns that say what each reading is (schemas/power-samples.frame.json):
    INSTRUMENT, the devices each domain INCLUDES (`INCLUDES`, overridden per domain), KIND,
    ROLE, source RANK and AVERAGING_S, each a value or an expression over DF's columns."""
    table = {**INCLUDES, **(includes or {})}

    def lit(v: object) -> pl.Expr:
        return v if isinstance(v, pl.Expr) else pl.lit(v)

    return conform(df.with_columns(
        instrument=lit(instrument), kind=lit(kind), role=lit(role),
        rank=lit(rank).cast(pl.Int64), averaging_s=lit(averaging_s).cast(pl.Float64),
        includes=pl.col("domain").replace_strict(table, default="", return_dtype=pl.String)))


def with_point_intervals(df: pl.DataFrame, by: Sequence[str] = ("source", "device")
                         ) -> pl.DataFrame:
    """For tools that log one time per reading: interval = time since the previous reading
    of the same series (file order), start = end - interval. A series' first reading, and
    one whose time does not move forward, gets no interval (see `order_faults`)."""
    prev = pl.col("end").shift(1).over(list(by), order_by="line")
    gap = (pl.col("end") - prev).dt.total_microseconds() / 1e6
    interval = pl.when(gap > 0).then(gap).otherwise(None)
    return df.with_columns(interval_s=interval).with_columns(
        start=pl.col("end") - pl.duration(microseconds=(pl.col("interval_s") * 1e6).round()))


def order_faults(df: pl.DataFrame, log: FaultLog, *, by: Sequence[str] = ("device",),
                 what: str = "sample") -> None:
    """A warning for each sample whose time goes back (kind `order`) or stands still (kind
    `repeat`: a tool that reads a value twice within one update) against the previous sample
    of the same series: the file was edited, merged or the clock jumped. A sample is one
    `line` (with the `by` columns): pass one row per sample where a sample spans lines."""
    samples = (df.filter(pl.col("end").is_not_null())
               .unique(subset=["line", *by], keep="first", maintain_order=True)
               .sort("line"))
    if samples.height < 2:
        return
    prev = pl.col("end").shift(1)
    prev = prev.over(list(by), order_by="line") if by else prev
    bad = samples.with_columns(prev=prev).filter(pl.col("end") <= pl.col("prev"))
    for r in bad.iter_rows(named=True):
        where = ", ".join(f"{k} {r[k]}" for k in by if r[k] is not None)
        goes_back = r["end"] < r["prev"]
        back = "goes back" if goes_back else "repeats the previous time"
        log.warning(f"This {what}{f' ({where})' if where else ''} {back}: "
                    f"{r['end']:%Y-%m-%d %H:%M:%S.%f} after {r['prev']:%Y-%m-%d %H:%M:%S.%f}.",
                    kind="order" if goes_back else "repeat", line=r["line"])


def drop_repeats(df: pl.DataFrame, log: FaultLog, *, key: Iterable[str] = ("end", "device"),
                 what: str = "row") -> pl.DataFrame:
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
    for r in per_line.join(first, on=list(key), how="left", nulls_equal=True).iter_rows(
            named=True):
        log.warning(f"This {what} repeats the time and device of line {r['first']}: its "
                    "readings are left out.", kind="duplicate", line=r["line"])
    return df.filter(~repeat)


def snapshot_warning(df: pl.DataFrame, log: FaultLog) -> None:
    """A `coverage` warning when no device has two timed samples: the file shows readings,
    not a trace that can cover a measurement window."""
    timed = df.filter(pl.col("end").is_not_null())
    if timed.is_empty():
        return
    if timed.group_by("device").agg(pl.col("end").n_unique().alias("n"))["n"].max() == 1:
        log.warning("One sample per device: the file shows a reading, not a trace that can "
                    "cover a measurement window (log repeatedly, e.g. nvidia-smi -lms, "
                    "powermetrics -i).", kind="coverage")
