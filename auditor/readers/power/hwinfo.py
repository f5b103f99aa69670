"""HWiNFO sensor-log CSV (HWiNFO64 "Log to file"), read as HWiNFO writes it.

- Encoding (`_common.decode`): a byte-order mark decides (UTF-8, UTF-16), bytes it cannot
  decode replaced with a warning, never re-read as cp1252; without a mark strict UTF-8, then
  cp1252 (HWiNFO writes the ANSI code page; some copies are UTF-8 that already hold U+FFFD
  where `°` was: a warning), or GBK (cp936, Simplified Chinese Windows' code page) when the
  header decodes so into Chinese power names. `meta["encoding"]` says which.
- Line 1 is the header: `Date,Time,` then one quoted name per sensor with its unit in
  brackets (`"CPU Package Power [W]"`). Names repeat across sensor groups (two
  `GPU Core (NVVDD) Output Power [W]`): each column is kept apart by position, and a
  repeated name's `source` carries its occurrence (`... [W] #2`). Every row ends with a
  comma, so there is a trailing empty column.
- Data rows: `D.M.YYYY` and `H:M:S.mmm`, none zero-padded (`14:0:7.890`), local time without
  a zone: the manifest's `local_utc_offset` converts it (without it: a `timezone` warning and
  UTC assumed). The digits after the dot are read as a count of milliseconds. `end` is the
  row's time; HWiNFO logs one time per row, so `interval_s` is the time since the previous
  row and `start` = end - interval (null for the first row).
- Footer, written when logging stops: the header again, then a sensor-group row naming each
  column's group (`CPU [#0]: Intel Core i9-12900H: Enhanced`). Group names hold unquoted
  commas (`[D:, F:]`, `MediaTek, Inc.`): a cell is joined to the previous one while the
  previous has unbalanced brackets or the cell starts with a space, then the groups are
  mapped to columns by position. Data stops at the first repeated header. Older HWiNFO
  versions write the repeated header alone: the log is complete (`meta["footer"]` is
  `header only`), its groups unknown. A log without the footer (cut, or still being
  written) is read with a `truncated` warning and no groups.
- A row with another number of fields than the header (a cut last line) is an error naming
  the line; the other rows are kept.

Network rates (`[KB/s]`, `[MB/s]` columns of a `Network:` sensor group; without the footer,
columns named `... DL rate` / `... UP rate`) are kept apart, in `meta["network"]` (`end`,
`line`, `source`, `kbps`): what the machine sent and received while the log ran (B2).
`meta["identity"]` is what the sensor groups name (`auditor.readers.identity`).

Power columns are those whose unit is `[W]` (or `[mW]`), except power limits (`PL1 Power
Limit`), which are settings, not readings (listed in `meta["skipped_columns"]`). Every power
column is kept as rows; `device` is the `[#N]` of its sensor group; `domain`:

| column (unit left out) | sensor group | domain |
| --- | --- | --- |
| CPU Package Power | any | package |
| CPU PPT | any | ppt |
| IA Cores Power, CPU Core Power (SVI3 TFN) | any | core |
| GT Cores Power | any | uncore (RAPL PP1, the integrated GPU) |
| CPU SoC Power (SVI3 TFN) | any | soc |
| System Agent Power | any | system_agent |
| Total System Power | any | psys |
| PCH Power | any | pch |
| Total DRAM Power (Intel's RAPL DRAM domain, in the CPU group) | any | dram |
| GPU Power (NVIDIA board power, as NVML reports it), GPU ASIC Power (AMD) | any | gpu |
| CPU 封装功率, GPU 功率, GPU ASIC 功率 (HWiNFO in Simplified Chinese) | any | package, gpu |
| Total Power | DDR DIMM [#N] | dram |
| Charge Rate | Battery | battery |
| any other `[W]` column (per-core, rails, connector inputs such as GPU 12VHPWR) | any | other |

GPU 12VHPWR or 8-pin input power is one connector of the board, not the board: it is
`other`; the board total is `GPU Power`. Power limits are recognized by English `Limit` and by
Intel's `PL1`/`PL2` acronyms, which every language keeps.

HWiNFO in another language (German `CPU-Gesamt-Leistungsaufnahme [W]`, `GPU Leistung [W]`,
`Gesamtleistung [W]`; French, Russian, Chinese...) writes names the table above does not
know. They are classified by what does not depend on the language (`by_semantics` in
`_hwinfo_names`, which holds the table and the power limits too): the unit, AMD's `PPT` and
the `DRAM` acronym, and the footer's sensor groups, whose names are device names
(`CPU [#0]: ...`, `GPU [#1]: ...`, `DDR5 DIMM [#2]: ...`). In each CPU group the first power
column without a part token (a rail such as VDDCR or NVVDD, SVI3, a connector, a numbered
core) is the package; in each GPU group, the board (GPU Power, or GPU ASIC Power after AMD's
VDDCR rails); in each DIMM group, the module's total: the order HWiNFO lists them in.
`meta["semantic_columns"]` lists the columns so classified. Without the footer such
names stay `other`, with a `header` warning that a package or board among them is not found.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
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
    line_endings,
    line_frame,
    local_offset,
    split_lines,
    to_utc_expr,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.power import _frame
from auditor.readers.power._hwinfo_names import LIMIT, by_semantics, domain_of, is_known

INFO = ReaderInfo(
    name="hwinfo",
    family="power",
    tool="HWiNFO",
    extensions=(".csv",),
    description="HWiNFO64 sensor log (CSV written by 'Log to file')",
)

_UNIT = re.compile(r"^(?P<base>.*?)\s*\[(?P<unit>[^\]]*)\]$")
_POWER_UNITS = {"W": 1.0, "mW": 1e-3}
_DEVICE = re.compile(r"\[#(\d+)\]")
_DATE = r"^(\d{1,2})\.(\d{1,2})\.(\d{4})$"
_TIME = r"^(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,3}))?$"


def sniff(head: bytes) -> bool:
    return head.lstrip(b"\xef\xbb\xbf").startswith(b"Date,Time,")


def read(
    data: bytes, *, name: str, local_utc_offset: str | None = None, **_: Any
) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "HWiNFO", "format": "csv", "timestamps": True, "units": ["W"]}
    if too_large(data, MAX_LOG_BYTES, log, "The HWiNFO log"):
        return Read(None, log.faults(), meta)
    decoded = decode(data, log)
    if decoded is None:
        return Read(None, log.faults(), meta)
    text, meta["encoding"] = decoded
    if meta["encoding"] == "cp1252" and (gbk := _as_gbk(data)) is not None:
        text, meta["encoding"] = gbk, "gbk"
    meta["line_endings"] = line_endings(text)
    lines = split_lines(text)
    if not lines or not lines[0].startswith("Date,Time,"):
        log.error(
            "Line 1 is not an HWiNFO header (it must start with 'Date,Time,').",
            kind="header",
            line=1,
            value=lines[0] if lines else "",
        )
        return Read(None, log.faults(), meta)
    try:
        names = next(csv.reader([lines[0]]))
    except csv.Error as exc:  # a lone CR (or a NUL) inside the header line
        log.error(f"Line 1 (the header) cannot be split into cells ({exc}).", kind="header", line=1)
        return Read(None, log.faults(), meta)
    meta["trailing_empty_column"] = names[-1] == ""
    end = _footer(lines, log, meta)
    groups = _groups(lines[end + 1], len(names), end + 2, log) if end + 1 < len(lines) else None
    columns = _power_columns(names, groups, meta, log)
    meta["identity"] = identity.from_hwinfo_groups(groups or [])
    if not columns:
        log.error("No power column (unit [W]) in the header.", kind="header", line=1)
        return Read(None, log.faults(), meta)
    network = _network_columns(names, groups)
    picked = sorted({0, 1, *(c["index"] for c in columns), *network})
    wide = csv_rows(
        line_frame(lines[1:end], 2),
        width=len(names),
        picked=picked,
        names=["date", "time", *(f"c{i}" for i in picked[2:])],
        log=log,
    )
    meta["samples"] = wide.height
    offset, tz_meta = local_offset(local_utc_offset, log, tool="HWiNFO")
    meta.update(tz_meta)
    wide = _times(wide, offset, log)
    meta["network"] = _network(wide, names, network)
    frame = _long(wide, columns, log)
    if frame.is_empty():
        log.error("No power reading in any row.", kind="empty")
        return Read(None, log.faults(), meta)
    _frame.order_faults(frame, log, by=(), what="row")
    frame = _frame.drop_repeats(frame, log, what="row")
    _frame.snapshot_warning(frame, log)
    return Read(
        _frame.describe(_frame.with_point_intervals(frame), log, instrument="hwinfo"),
        log.faults(),
        meta,
    )


_RATE = re.compile(r"^(?P<base>.*?) \[(?P<unit>KB/s|MB/s)\]$")
_NET_NAME = re.compile(r"\b(DL|UP) rate\b", re.IGNORECASE)
_NET_SCALE = {"KB/s": 1.0, "MB/s": 1024.0}


def _network_columns(names: list[str], groups: list[str] | None) -> dict[int, float]:
    """Column -> scale to KB/s of each network rate: a `[KB/s]` or `[MB/s]` column of a
    `Network:` sensor group (any language: the group names the adapter), or, without the
    footer's groups, one named `... DL rate` / `... UP rate`."""
    out: dict[int, float] = {}
    for i, col in enumerate(names):
        m = _RATE.match(col)
        if m is None:
            continue
        group = groups[i] if groups else None
        if (group is not None and group.startswith("Network:")) or (
            groups is None and _NET_NAME.search(m["base"])
        ):
            out[i] = _NET_SCALE[m["unit"]]
    return out


def _network(wide: pl.DataFrame, names: list[str], network: dict[int, float]) -> pl.DataFrame:
    """The network rates the log holds, one row per row and column: `end` (UTC), `line`,
    `source` (the column, its occurrence where the name repeats), `kbps` (null where the
    cell is no number)."""
    seen: Counter[str] = Counter(names)
    parts = []
    for i, scale in network.items():
        n = names[: i + 1].count(names[i])
        source = f"{names[i]} #{n}" if seen[names[i]] > 1 else names[i]
        number = pl.col(f"c{i}").str.strip_chars().cast(pl.Float64, strict=False)
        parts.append(
            wide.select(
                "end",
                "line",
                source=pl.lit(source),
                kbps=pl.when(number.is_finite()).then(number * scale),
            )
        )
    schema = {
        "end": pl.Datetime("us", "UTC"),
        "line": pl.Int64,
        "source": pl.String,
        "kbps": pl.Float64,
    }
    return pl.concat(parts).cast(schema) if parts else pl.DataFrame(schema=schema)  # type: ignore[arg-type]


def _footer(lines: list[str], log: FaultLog, meta: dict[str, Any]) -> int:
    """The index of the repeated header (end of data), or len(lines) when there is none."""
    try:
        end = lines.index(lines[0], 1)
    except ValueError:
        log.warning(
            "No footer (the repeated header and sensor-group row HWiNFO writes when "
            "logging stops): the log was cut or is still being written; sensor "
            "groups are unknown.",
            kind="truncated",
            line=len(lines),
        )
        meta["footer"] = False
        return len(lines)
    meta["footer"] = True
    if end + 1 >= len(lines):
        # older HWiNFO versions end the log with the repeated header alone: complete
        meta["footer"] = "header only"
    elif any(ln.strip() for ln in lines[end + 2 :]):
        log.warning(
            "Lines after the footer's sensor-group row are not read.", kind="format", line=end + 3
        )
    return end


def _groups(row: str, width: int, line: int, log: FaultLog) -> list[str] | None:
    """The sensor group of each column, re-joining group names split at unquoted commas."""
    cells: list[str] = []
    for cell in row.split(","):
        prev = cells[-1] if cells else None
        if prev is not None and (_unbalanced(prev) or cell.startswith(" ")):
            cells[-1] = prev + "," + cell
        else:
            cells.append(cell)
    if len(cells) != width:
        log.warning(
            f"The sensor-group row names {len(cells)} groups for {width} columns: "
            "columns are not mapped to groups (devices unknown).",
            kind="header",
            line=line,
        )
        return None
    return cells


def _unbalanced(cell: str) -> bool:
    return cell.count("[") != cell.count("]") or cell.count("(") != cell.count(")")


def _power_columns(
    names: list[str], groups: list[str] | None, meta: dict[str, Any], log: FaultLog
) -> list[dict[str, Any]]:
    counts = Counter(names)
    seen: Counter[str] = Counter()
    columns, skipped = [], []
    for i, col in enumerate(names):
        seen[col] += 1
        m = _UNIT.match(col)
        if m is None or m["unit"] not in _POWER_UNITS:
            continue
        source = f"{col} #{seen[col]}" if counts[col] > 1 else col
        if LIMIT.search(m["base"]):
            skipped.append(source)
            continue
        group = groups[i] if groups else None
        dev = _DEVICE.search(group) if group else None
        domain = domain_of(m["base"], group)
        columns.append(
            {
                "index": i,
                "source": source,
                "base": m["base"],
                "scale": _POWER_UNITS[m["unit"]],
                "domain": domain,
                "known": is_known(m["base"]),
                "group": group,
                "device": int(dev[1]) if dev else None,
            }
        )
    meta["semantic_columns"] = by_semantics(columns)
    unknown = [
        c
        for c in columns
        if not c["known"] and c["source"] not in meta["semantic_columns"] and c["domain"] == "other"
    ]
    if unknown and not groups:
        log.warning(
            f"{len(unknown)} of the {len(columns)} power columns have names this reader "
            f"does not know (a HWiNFO in another language?), such as "
            f"{unknown[0]['source']!r}: without the footer's sensor groups they are "
            "read as other, so a CPU package or GPU board among them is not found.",
            kind="header",
            line=1,
        )
    meta["skipped_columns"] = skipped
    meta["power_columns"] = len(columns)
    meta["devices"] = sorted({c["group"] for c in columns if c["group"]})
    return columns


_CJK = re.compile(r"[\u4e00-\u9fff]")


def _as_gbk(data: bytes) -> str | None:
    """DATA as GBK (cp936, the ANSI code page of Simplified Chinese Windows, which HWiNFO
    writes there) when its header decodes strictly so and names a power column in Chinese
    (`CPU 封装功率 [W]`); None otherwise. Read as cp1252, such a header is mojibake
    (`CPU ·â×°¹¦ÂÊ [W]`) that no name can match; a German or French cp1252 header rarely
    decodes as GBK and never into CJK power names ending in `[W]`."""
    try:
        text = data.decode("gbk")
    except UnicodeDecodeError:
        return None
    header = text.split("\n", 1)[0]
    return (
        text
        if any(_CJK.search(c) for c in header.split(",") if c.rstrip('"').endswith(("[W]", "[mW]")))
        else None
    )


def _times(wide: pl.DataFrame, offset: Any, log: FaultLog) -> pl.DataFrame:
    d = pl.col("date").str.extract_groups(_DATE)
    t = pl.col("time").str.extract_groups(_TIME)
    # zero-pad the parts and parse them strictly: an impossible date (31.2.) becomes null,
    # never an error; the digits after the dot are a count of milliseconds
    padded = pl.concat_str(
        d.struct["3"],
        pl.lit("-"),
        d.struct["2"].str.zfill(2),
        pl.lit("-"),
        d.struct["1"].str.zfill(2),
        pl.lit(" "),
        t.struct["1"].str.zfill(2),
        pl.lit(":"),
        t.struct["2"].str.zfill(2),
        pl.lit(":"),
        t.struct["3"].str.zfill(2),
        pl.lit("."),
        t.struct["4"].fill_null("0").str.zfill(3),
    )
    local = padded.str.to_datetime("%Y-%m-%d %H:%M:%S%.3f", time_unit="us", strict=False)
    wide = wide.with_columns(end=to_utc_expr(local, offset))
    for r in wide.filter(pl.col("end").is_null()).iter_rows(named=True):
        log.error(
            "The row's date and time cannot be read (a real D.M.YYYY and H:M:S.mmm "
            "expected): not read.",
            kind="type",
            line=r["line"],
            value=f"{r['date']},{r['time']}",
        )
    return wide.filter(pl.col("end").is_not_null())


def _long(wide: pl.DataFrame, columns: list[dict[str, Any]], log: FaultLog) -> pl.DataFrame:
    parts = []
    for c in columns:
        col = f"c{c['index']}"
        number = pl.col(col).str.strip_chars().cast(pl.Float64, strict=False)
        watts = pl.when(number.is_finite()).then(number)
        part = wide.select(
            "end", "line", pl.col(col).alias("raw"), (watts * c["scale"]).alias("watts")
        )
        for r in part.filter(
            pl.col("watts").is_null() & (pl.col("raw").str.strip_chars() != "")
        ).iter_rows(named=True):
            log.error(
                f"{c['source']} is not a number: the reading is left out.",
                kind="type",
                line=r["line"],
                field=c["source"],
                value=r["raw"],
            )
        parts.append(
            part.filter(pl.col("watts").is_not_null()).with_columns(
                domain=pl.lit(c["domain"]),
                device=pl.lit(c["device"], pl.Int64),
                source=pl.lit(c["source"]),
            )
        )
    return _frame.conform(pl.concat(parts)) if parts else _frame.empty()


READER = EvidenceReader(INFO, rank=140, sniff=sniff, read=read, doc=__doc__ or "")
