"""`nvidia-smi dmon` (per-device monitor): `#` header lines (names, then units), then one
whitespace-separated row per GPU per poll; `-` marks a value that is not available. dmon
repeats its header now and then: every `#` line is skipped.

A dmon log without the `pwr` column (`-s u`, `-s m`...: dmon shows power only with its `p`
group) is recognized and refused with that advice, never "no reader recognizes this file".

`pwr` (unit W) is read as domain `gpu`, `device` = the `gpu` (`Idx`) column, `source`
`pwr`. By default dmon writes no time at all: `start`, `end` and `interval_s` are null,
`meta["timestamps"]` is False and a `coverage` warning says the file cannot show which
window it covers. With `-o D`/`-o T`/`-o DT` it writes `Date` (YYYYMMDD) and `Time`
(HH:MM:SS) columns, local without a zone: they are read with the manifest's
`local_utc_offset`, and intervals come from consecutive polls of each GPU.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from auditor.readers._common import (
    MAX_LOG_BYTES,
    EvidenceReader,
    FaultLog,
    ReaderInfo,
    decode,
    local_offset,
    text_frame,
    to_utc_expr,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.power import _frame, _nvsmi

INFO = ReaderInfo(
    name="nvidia-smi-dmon",
    family="power",
    tool="nvidia-smi",
    extensions=(".txt", ".log"),
    description="nvidia-smi dmon output (per-device monitor; no timestamps unless -o DT)",
)


def sniff(head: bytes) -> bool:
    """dmon's two `#` header lines (names with `gpu`, units with `Idx`), with or without the
    power column: a dmon log without power is recognized, and refused with how to log it."""
    lines = head.lstrip().split(b"\n", 2)
    return (
        len(lines) >= 2
        and lines[0].startswith(b"#")
        and lines[1].startswith(b"#")
        and b"gpu" in lines[0].lstrip(b"#").split()
        and b"Idx" in lines[1]
    )


def read(
    data: bytes, *, name: str, local_utc_offset: str | None = None, **_: Any
) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "nvidia-smi", "format": "dmon", "units": ["W"]}
    if too_large(data, MAX_LOG_BYTES, log, "The dmon log"):
        return Read(None, log.faults(), meta)
    decoded = decode(data, log)
    if decoded is None:
        return Read(None, log.faults(), meta)
    frame = text_frame(decoded[0])
    meta["encoding"] = decoded[1]
    first = frame.filter(pl.col("text").str.starts_with("#")).head(1)["text"].to_list()
    header = first[0].lstrip("#").split() if first else []
    meta["columns"] = header
    if "gpu" not in header:
        log.error("No '# gpu ...' header line: not a dmon log.", kind="header", line=1)
        return Read(None, log.faults(), meta)
    if "pwr" not in header:
        log.error(
            f"A dmon log without power (its columns: {' '.join(header)}): dmon writes "
            "the pwr column only with the p group, so run `nvidia-smi dmon -s p` (or "
            "`-s pu`, with `-o DT` for times).",
            kind="header",
            line=1,
        )
        return Read(None, log.faults(), meta)
    at = {n: header.index(n) for n in ("gpu", "pwr", "Date", "Time") if n in header}
    meta["timestamps"] = "Time" in at
    offset = None
    if meta["timestamps"]:
        offset, tz_meta = local_offset(local_utc_offset, log, tool="nvidia-smi dmon")
        meta.update(tz_meta)
    # every `#` line (dmon repeats its header) and blank line is skipped
    body = frame.filter(
        ~pl.col("text").str.starts_with("#") & (pl.col("text").str.strip_chars() != "")
    ).with_columns(cells=pl.col("text").str.extract_all(r"\S+"))
    body = body.with_columns(n=pl.col("cells").list.len())
    meta["rows"] = body.height
    for i, raw, n in (
        body.filter(pl.col("n") != len(header)).select("line", "text", "n").iter_rows()
    ):
        log.error(
            f"Row has {n} values where the header names {len(header)}: not read.",
            kind="truncated" if n < len(header) else "syntax",
            line=i,
            value=raw,
        )
    body = body.filter(pl.col("n") == len(header)).with_columns(
        pwr=pl.col("cells").list.get(at["pwr"]), idx=pl.col("cells").list.get(at["gpu"])
    )
    body = body.with_columns(end=_times(body, at, offset, log))
    body = body.filter(pl.col("pwr") != "-").with_columns(
        watts=pl.col("pwr").cast(pl.Float64, strict=False),
        device=pl.when(pl.col("idx").str.contains(r"^\d{1,9}$")).then(
            pl.col("idx").cast(pl.Int64, strict=False)
        ),
    )
    bad = pl.col("watts").is_null() | pl.col("device").is_null()
    for i, raw in body.filter(bad).select("line", "text").iter_rows():
        log.error(
            "gpu or pwr is not a number: the row is left out.", kind="type", line=i, value=raw
        )
    rows = body.filter(~bad)
    if not meta["timestamps"]:
        log.warning(
            "dmon writes no time: the readings cannot show which window they cover "
            "(run dmon with -o DT, or log with --query-gpu=timestamp,...).",
            kind="coverage",
        )
    if rows.is_empty():
        log.error("No power reading (pwr) in any row.", kind="empty")
        return Read(None, log.faults(), meta)
    out = _frame.conform(
        rows.select("end", "device", "watts", "line", domain=pl.lit("gpu"), source=pl.lit("pwr"))
    )
    if meta["timestamps"]:
        _frame.order_faults(out, log, by=("device",), what="row")
        out = _frame.with_point_intervals(out)
        _frame.snapshot_warning(out, log)
    return Read(_nvsmi.describe(out, log), log.faults(), meta)


def _times(body: pl.DataFrame, at: dict[str, int], offset: Any, log: FaultLog) -> pl.Series:
    """The rows' `-o D`/`-o DT` times in UTC (null without them, and for a time that cannot
    be read: a `type` error naming the row)."""
    if offset is None:
        return pl.repeat(None, body.height, dtype=_frame.schema()["end"], eager=True)
    dated = "Date" in at
    text = (
        pl.concat_str(
            pl.col("cells").list.get(at["Date"]), pl.lit(" "), pl.col("cells").list.get(at["Time"])
        )
        if dated
        else pl.col("cells").list.get(at["Time"])
    )
    local = text.str.to_datetime(
        "%Y%m%d %H:%M:%S" if dated else "%H:%M:%S", time_unit="us", strict=False
    )
    end = body.select(to_utc_expr(local, offset)).to_series()
    for i, raw in body.filter(end.is_null()).select("line", text.alias("t")).iter_rows():
        log.error(
            "The row's Date/Time cannot be read (or is no plausible time): the reading "
            "has no time.",
            kind="type",
            line=i,
            value=raw,
        )
    if not dated and body.height:
        log.warning(
            "dmon -o T writes a time without a date: the date is unknown (1900-01-01 is used).",
            kind="type",
            line=body["line"][0],
        )
    return end


READER = EvidenceReader(INFO, rank=100, sniff=sniff, read=read, doc=__doc__ or "")
