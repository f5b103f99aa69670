"""`nvidia-smi --query-gpu=timestamp,index,...,power.draw,... --format=csv[,nounits] -lms N`.

Line 1 names the fields, `, `-separated, with their unit in brackets (`power.draw [W]`);
every other line is one GPU at one poll. Cells are never quoted. With `nounits` cells are
bare numbers (`70.89`), without it they carry the unit (`631.95 W`). `[N/A]`, `N/A`,
`[Not Supported]` and `[Requested functionality has been deprecated]` mean no value: no row,
and one `missing` warning per field with the count (a field missing everywhere is listed in
`meta["unavailable_fields"]`). A cell that is neither a number, a number in W, nor a missing
word is a `units` error naming the line. A file may lack its final line end.

- `timestamp` (`YYYY/MM/DD HH:MM:SS.mmm`, local, no zone) is `end`, with the manifest's
  `local_utc_offset`; without a `timestamp` field the frame has no times
  (`meta["timestamps"]` False: coverage cannot be shown). nvidia-smi logs one time per
  reading, so `interval_s` is the time since that GPU's previous poll, `start` = end -
  interval.
- `index` is `device` (null without an `index` field).
- Rows are keyed by (timestamp, index): a repeated key is a `duplicate` warning and the
  repeat's readings are left out; two indexes reporting the same `pci.bus_id` at the same
  time is a `duplicate` warning too (an edited or merged file).
- A repeated header line (two logs appended to one file) is skipped with a warning.

Power fields and domains: power.draw, power.draw.average, power.draw.instant -> gpu;
module.power.draw, module.power.draw.average, module.power.draw.instant -> module (the whole
module, e.g. Grace Hopper). `source` is the header cell as written (`power.draw.instant [W]`).
Limits (power.limit, enforced.power.limit, ...) are settings, not readings. There is no
energy field in the query.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from auditor.readers import identity
from auditor.readers._common import (
    MAX_LOG_BYTES,
    EvidenceReader,
    FaultLog,
    ReaderInfo,
    csv_rows,
    decode,
    local_offset,
    text_frame,
    to_utc_expr,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.power import _frame, _nvsmi

INFO = ReaderInfo(
    name="nvidia-smi-csv",
    family="power",
    tool="nvidia-smi",
    extensions=(".csv", ".txt"),
    description="nvidia-smi --query-gpu=... --format=csv[,nounits] log",
)

DOMAINS = {
    "power.draw": "gpu",
    "power.draw.average": "gpu",
    "power.draw.instant": "gpu",
    "module.power.draw": "module",
    "module.power.draw.average": "module",
    "module.power.draw.instant": "module",
}
_FIELD = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?: \[(?P<unit>[^\]]+)\])?$")
_INFO_FIELDS = ("name", "pci.bus_id", "driver_version", "uuid", "serial")


def sniff(head: bytes) -> bool:
    first = head.split(b"\n", 1)[0].strip().decode("utf-8", "replace")
    names = [c.strip() for c in first.split(",")]
    return (
        len(names) > 0
        and all(_FIELD.match(n) for n in names)
        and any(
            _FIELD.match(n)["name"] in (*DOMAINS, "timestamp", "index", "pci.bus_id")  # type: ignore[index]
            for n in names
        )
    )


def read(
    data: bytes, *, name: str, local_utc_offset: str | None = None, first_line: int = 1, **_: Any
) -> Read[pl.DataFrame]:
    """`first_line`: the line number of `data`'s first line (a section of a larger file)."""
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "nvidia-smi", "format": "query-gpu-csv", "units": ["W"]}
    if too_large(data, MAX_LOG_BYTES, log, "The nvidia-smi log"):
        return Read(None, log.faults(), meta)
    decoded = decode(data, log)
    if decoded is None:
        return Read(None, log.faults(), meta)
    text, meta["encoding"] = decoded
    all_lines = text_frame(text, first_line)
    first = all_lines["text"][0] if all_lines.height else ""
    header = [c.strip() for c in first.split(",")] if all_lines.height else []
    fields = [_FIELD.match(c) for c in header]
    if not header or not all(fields):
        log.error(
            "The first line is not a --query-gpu header (field names such as "
            "'timestamp, index, power.draw [W]').",
            kind="header",
            line=first_line,
            value=first,
        )
        return Read(None, log.faults(), meta)
    names = [m["name"] for m in fields]  # type: ignore[index]
    power = [i for i, n in enumerate(names) if n in DOMAINS]
    meta["fields"] = len(names)
    meta["timestamps"] = "timestamp" in names
    if not power:
        log.error(
            "No power field (power.draw, power.draw.average, power.draw.instant) in the header.",
            kind="header",
            line=first_line,
        )
        return Read(None, log.faults(), meta)
    units = {header[i]: fields[i]["unit"] for i in power}  # type: ignore[index]
    for col, unit in units.items():
        if unit not in (None, "W"):
            log.error(
                f"{col} is in {unit}, not W: not read.", kind="units", line=first_line, field=col
            )
    power = [i for i in power if units[header[i]] in (None, "W")]
    keys = [i for i, n in enumerate(names) if n in ("timestamp", "index", *_INFO_FIELDS)]
    picked = sorted({*keys, *power})
    body = all_lines.slice(1).filter(pl.col("text").str.strip_chars() != "")
    repeated = pl.col("text").str.strip_chars() == first.strip()
    for line in body.filter(repeated)["line"]:
        log.warning(
            "The header repeats here (two logs appended to one file?): skipped.",
            kind="header",
            line=line,
        )
    cells = csv_rows(
        body.filter(~repeated),
        width=len(header),
        picked=picked,
        names=[header[i] for i in picked],
        log=log,
    )
    cells = cells.with_columns(pl.col(c).str.strip_chars() for c in cells.columns if c != "line")
    meta["rows"] = cells.height
    meta["units_in_cells"] = bool(cells.height) and any(
        cells[header[i]].str.ends_with(" W").any() for i in power
    )
    end = _times(cells, header, names, local_utc_offset, log, meta, first_line)
    device = _index(cells, header, names, log)
    cells = cells.with_columns(end=end, device=device)
    meta["devices"] = _devices(cells, header, names)
    meta["identity"] = identity.Identity(gpus=identity.gpus_of(meta["devices"]))
    # order, repeats and copied bus ids are facts of the rows (one poll of one GPU each), so
    # they are checked once per row, before the row's readings are spread out
    polls = cells.select("end", "device", "line", source=pl.lit("row"))
    _frame.order_faults(polls, log, by=("device",), what="row")
    kept = _frame.drop_repeats(polls, log, what="row")["line"]
    _same_bus(cells, header, names, log)
    if kept.len() < cells.height:
        cells = cells.filter(pl.col("line").is_in(kept.implode()))
    frame = _frame.conform(
        pl.concat([_readings(cells, header[i], names[i], log, meta) for i in power])
    )
    if frame.is_empty():
        log.error("No power reading in any row.", kind="empty")
        return Read(None, log.faults(), meta)
    _frame.snapshot_warning(frame, log)
    return Read(_nvsmi.describe(_frame.with_point_intervals(frame), log), log.faults(), meta)


def _times(
    cells: pl.DataFrame,
    header: list[str],
    names: list[str],
    option: str | None,
    log: FaultLog,
    meta: dict[str, Any],
    header_line: int,
) -> pl.Series:
    if "timestamp" not in names:
        log.warning(
            "No timestamp field: the readings have no time, so the log cannot show "
            "which window it covers.",
            kind="coverage",
            line=header_line,
        )
        return pl.repeat(None, cells.height, dtype=_frame.schema()["end"], eager=True)
    col = header[names.index("timestamp")]
    offset, tz_meta = local_offset(option, log, tool="nvidia-smi")
    meta.update(tz_meta)
    local = pl.col(col).str.strptime(pl.Datetime("us"), "%Y/%m/%d %H:%M:%S%.f", strict=False)
    end = cells.select(to_utc_expr(local, offset)).to_series()
    if not end.null_count():
        return end
    for line, raw in cells.filter(end.is_null()).select("line", col).iter_rows():
        log.error(
            "The timestamp cannot be read (a real YYYY/MM/DD HH:MM:SS.mmm expected): the "
            "row's readings are left out.",
            kind="type",
            line=line,
            field=col,
            value=raw,
        )
    return end


def _index(cells: pl.DataFrame, header: list[str], names: list[str], log: FaultLog) -> pl.Series:
    if "index" not in names:
        return pl.repeat(None, cells.height, dtype=pl.Int64, eager=True)
    col = header[names.index("index")]
    index = cells[col].cast(pl.Int64, strict=False)
    for line, raw in cells.filter(index.is_null()).select("line", col).iter_rows():
        log.error(
            "The GPU index is not an integer: the row's readings have no device.",
            kind="type",
            line=line,
            field=col,
            value=raw,
        )
    return index


def _devices(cells: pl.DataFrame, header: list[str], names: list[str]) -> list[dict[str, Any]]:
    info = {header[names.index(n)]: n for n in _INFO_FIELDS if n in names}
    if not info:
        return []
    first = (
        cells.filter(pl.col("device").is_not_null())
        .group_by("device")
        .agg(pl.col(c).first() for c in info)
        .sort("device")
    )
    return [
        {"index": r["device"], **{info[c]: r[c] for c in info}} for r in first.iter_rows(named=True)
    ]


def _readings(
    cells: pl.DataFrame, col: str, field: str, log: FaultLog, meta: dict[str, Any]
) -> pl.DataFrame:
    raw = pl.col(col)
    # `631.95 W`, `631.95` (nounits) or, from some tools, `500 mW`: the number before the unit
    milli = raw.str.ends_with(" mW")
    number = raw.str.strip_suffix(" mW").str.strip_suffix(" W").str.strip_chars()
    plain = number.str.contains(r"^\d+(?:\.\d+)?$")
    value = pl.when(plain).then(number.cast(pl.Float64, strict=False))
    part = cells.filter(pl.col("end").is_not_null() | pl.lit(not meta["timestamps"])).select(
        "end",
        "device",
        "line",
        raw.alias("raw"),
        (value * pl.when(milli).then(_nvsmi.SCALE["mW"]).otherwise(1.0)).alias("watts"),
        raw.str.contains(_nvsmi.MISSING_PATTERN).alias("missing"),
    )
    missing = part.filter("missing")
    if missing.height == part.height:
        meta.setdefault("unavailable_fields", []).append(col)
    if missing.height:
        log.warning(
            f"{col} has no value ({missing['raw'][0]}) in {missing.height} of "
            f"{part.height} rows (the first is at the line given).",
            kind="missing",
            line=missing["line"][0],
            field=col,
        )
    for line, value in (
        part.filter(pl.col("watts").is_null() & ~pl.col("missing"))
        .select("line", "raw")
        .iter_rows()
    ):
        log.error(
            f"{col} is not a power in W: the reading is left out.",
            kind="units",
            line=line,
            field=col,
            value=value,
        )
    return part.filter(pl.col("watts").is_not_null()).select(
        "end", "device", "line", "watts", domain=pl.lit(DOMAINS[field]), source=pl.lit(col)
    )


def _same_bus(cells: pl.DataFrame, header: list[str], names: list[str], log: FaultLog) -> None:
    """Two GPU indexes reporting one PCI bus id at one time: rows copied under a new index."""
    if "pci.bus_id" not in names or "timestamp" not in names:
        return
    bus = header[names.index("pci.bus_id")]
    timed = cells.filter(pl.col("end").is_not_null())
    pairs = timed.select(
        pl.struct("end", bus).n_unique().alias("a"),
        pl.struct("end", bus, "device").n_unique().alias("b"),
    )
    if pairs["a"].item() == pairs["b"].item():
        return  # the usual case: one index per bus id and time
    clash = (
        timed.group_by("end", bus)
        .agg(pl.col("device").n_unique().alias("n"), pl.col("line").sort().alias("lines"))
        .filter(pl.col("n") > 1)
        .sort(pl.col("lines").list.first())
    )
    for r in clash.iter_rows(named=True):
        log.warning(
            f"Lines {', '.join(map(str, r['lines']))} give different GPU indexes for "
            f"the same bus id {r[bus]} at the same time: copied or edited rows?",
            kind="duplicate",
            line=r["lines"][1],
            field=bus,
        )


READER = EvidenceReader(INFO, rank=150, sniff=sniff, read=read, doc=__doc__ or "")
