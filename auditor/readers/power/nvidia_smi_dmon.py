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

import math
from datetime import datetime
from typing import Any

import polars as pl

from auditor.readers._common import (
    MAX_LOG_BYTES,
    EvidenceReader,
    FaultLog,
    ReaderInfo,
    decode,
    local_offset,
    split_lines,
    to_utc,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.power import _frame, _nvsmi

INFO = ReaderInfo(
    name="nvidia-smi-dmon", family="power", tool="nvidia-smi", extensions=(".txt", ".log"),
    description="nvidia-smi dmon output (per-device monitor; no timestamps unless -o DT)")


def sniff(head: bytes) -> bool:
    """dmon's two `#` header lines (names with `gpu`, units with `Idx`), with or without the
    power column: a dmon log without power is recognized, and refused with how to log it."""
    lines = head.lstrip().split(b"\n", 2)
    return (len(lines) >= 2 and lines[0].startswith(b"#") and lines[1].startswith(b"#")
            and b"gpu" in lines[0].lstrip(b"#").split() and b"Idx" in lines[1])


def read(data: bytes, *, name: str, local_utc_offset: str | None = None,
         **_: Any) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "nvidia-smi", "format": "dmon", "units": ["W"]}
    if too_large(data, MAX_LOG_BYTES, log, "The dmon log"):
        return Read(None, log.faults(), meta)
    decoded = decode(data, log)
    if decoded is None:
        return Read(None, log.faults(), meta)
    lines = split_lines(decoded[0])
    meta["encoding"] = decoded[1]
    header = next((ln.lstrip("#").split() for ln in lines if ln.startswith("#")), [])
    meta["columns"] = header
    if "gpu" not in header:
        log.error("No '# gpu ...' header line: not a dmon log.", kind="header", line=1)
        return Read(None, log.faults(), meta)
    if "pwr" not in header:
        log.error(f"A dmon log without power (its columns: {' '.join(header)}): dmon writes "
                  "the pwr column only with the p group, so run `nvidia-smi dmon -s p` (or "
                  "`-s pu`, with `-o DT` for times).", kind="header", line=1)
        return Read(None, log.faults(), meta)
    at = {n: header.index(n) for n in ("gpu", "pwr", "Date", "Time") if n in header}
    meta["timestamps"] = "Time" in at
    offset = None
    if meta["timestamps"]:
        offset, tz_meta = local_offset(local_utc_offset, log, tool="nvidia-smi dmon")
        meta.update(tz_meta)
    rows, polls = [], 0
    for i, raw in enumerate(lines, start=1):
        if raw.startswith("#") or not raw.strip():
            continue
        cells = raw.split()
        polls += 1
        if len(cells) != len(header):
            log.error(f"Row has {len(cells)} values where the header names {len(header)}: not "
                      "read.", kind="truncated" if len(cells) < len(header) else "syntax",
                      line=i, value=raw)
            continue
        pwr, idx = cells[at["pwr"]], cells[at["gpu"]]
        end = _time(cells, at, offset, i, log) if offset is not None else None
        if pwr == "-":
            continue
        if not idx.isdigit() or not _is_number(pwr):
            log.error("gpu or pwr is not a number: the row is left out.", kind="type", line=i,
                      value=raw)
            continue
        rows.append({"end": end, "domain": "gpu", "device": int(idx), "watts": float(pwr),
                     "source": "pwr", "line": i})
    meta["rows"] = polls
    if not meta["timestamps"]:
        log.warning("dmon writes no time: the readings cannot show which window they cover "
                    "(run dmon with -o DT, or log with --query-gpu=timestamp,...).",
                    kind="coverage")
    if not rows:
        log.error("No power reading (pwr) in any row.", kind="empty")
        return Read(None, log.faults(), meta)
    frame = _frame.from_rows(rows)
    if meta["timestamps"]:
        _frame.order_faults(frame, log, by=("device",), what="row")
        frame = _frame.with_point_intervals(frame)
        _frame.snapshot_warning(frame, log)
    return Read(_nvsmi.describe(frame, log), log.faults(), meta)


def _time(cells: list[str], at: dict[str, int], offset: Any, line: int, log: FaultLog
          ) -> datetime | None:
    text = f"{cells[at['Date']]} {cells[at['Time']]}" if "Date" in at else cells[at["Time"]]
    try:
        local = datetime.strptime(text, "%Y%m%d %H:%M:%S" if "Date" in at else "%H:%M:%S")
    except ValueError:
        log.error("The row's Date/Time cannot be read: the reading has no time.", kind="type",
                  line=line, value=text)
        return None
    if "Date" not in at:
        log.warning("dmon -o T writes a time without a date: the date is unknown (1900-01-01 "
                    "is used).", kind="type", line=line)
    end = to_utc(local, offset)
    if end is None:
        log.error("The row's Date/Time is not a plausible time: the reading has no time.",
                  kind="type", line=line, value=text)
    return end


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text)) and float(text) >= 0
    except ValueError:
        return False


READER = EvidenceReader(INFO, rank=100, sniff=sniff, read=read, doc=__doc__ or "")
