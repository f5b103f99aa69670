"""Core ML per-operation backend selection as a CSV (freedomtan/coreml_modelc_profling's
`without_compute_plan` tool, built on E5RT's undocumented methods):

    DebugName, OpType, SelectedBackend, backend_0, ..., est_time_0, ..., invalid_0, ...
    ios17.mul:6:12, ios17.mul, "bnns", , bnns, classic_cpu, mps_graph, , 0.026, 0.030, ...

Cells are separated by `, ` and a quoted cell follows the space (read with initial spaces
skipped). One row per operation: `node` = DebugName, `op_type` = OpType, `provider` = the
SelectedBackend without its quotes (ane, bnns, classic_cpu, mps_graph), `device` normalized
(ane -> ane; bnns, classic_cpu -> cpu; mps_graph -> gpu), `cost` = the est_time_i of the
backend_i that equals the selected backend (the tool's estimated run time on the backend
that runs it); no such backend, or an empty est_time, leaves the cost null with a `missing`
warning. An empty SelectedBackend is `unknown`. A row with another number of cells than the
header is an error naming its line.
"""

from __future__ import annotations

import csv
import math
from typing import Any

import polars as pl

from auditor.readers._common import (
    MAX_LOG_BYTES,
    EvidenceReader,
    FaultLog,
    ReaderInfo,
    decode,
    split_lines,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.placement import _frame

INFO = ReaderInfo(
    name="coreml-profiling-csv",
    family="placement",
    tool="Core ML (E5RT profiling)",
    extensions=(".csv",),
    description="Core ML per-op SelectedBackend and est_time per backend (CSV)",
)

_REQUIRED = ("DebugName", "OpType", "SelectedBackend")


def sniff(head: bytes) -> bool:
    return head.lstrip(b"\xef\xbb\xbf").startswith(b"DebugName, OpType, SelectedBackend")


def read(data: bytes, *, name: str, **_: Any) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "Core ML", "format": "profiling CSV"}
    if too_large(data, MAX_LOG_BYTES, log, "The profiling CSV"):
        return Read(None, log.faults(), meta)
    decoded = decode(data, log)
    if decoded is None:
        return Read(None, log.faults(), meta)
    lines = split_lines(decoded[0])
    table = [_cells(ln, i, log) for i, ln in enumerate(lines, start=1)]
    header = [h.strip() for h in table[0]] if table else []
    if not all(c in header for c in _REQUIRED):
        log.error(
            f"The header lacks {', '.join(c for c in _REQUIRED if c not in header)}.",
            kind="header",
            line=1,
        )
        return Read(None, log.faults(), meta)
    pairs = [
        (header.index(b), header.index(f"est_time_{b[8:]}"))
        for b in header
        if b.startswith("backend_") and f"est_time_{b[8:]}" in header
    ]
    rows = []
    for i, cells in enumerate(table[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            log.error(
                f"Row has {len(cells)} cells where the header has {len(header)}: not read.",
                kind="truncated" if len(cells) < len(header) else "syntax",
                line=i,
                value=lines[i - 1],
            )
            continue
        row = dict(zip(header, (c.strip() for c in cells), strict=True))
        selected = row["SelectedBackend"].strip('"') or None
        cost = (
            next((row_cost(cells[t]) for b, t in pairs if cells[b].strip() == selected), None)
            if selected
            else None
        )
        if selected and cost is None:
            log.warning(
                f"No est_time for the selected backend {selected}: cost unknown.",
                kind="missing",
                line=i,
                field="SelectedBackend",
            )
        rows.append(
            {
                "node": row["DebugName"],
                "op_type": row["OpType"] or None,
                "provider": selected,
                "device": _frame.device_of(selected),
                "cost": cost,
                "line": i,
            }
        )
    meta["operations"] = len(rows)
    meta["backends"] = sorted({r["provider"] for r in rows if r["provider"]})
    return Read(_frame.finish(rows, log), log.faults(), meta)


def _cells(line: str, number: int, log: FaultLog) -> list[str]:
    """One line's cells (the tool writes no cell across lines); a line csv cannot split is
    a `syntax` fault and no cells."""
    try:
        return next(csv.reader([line], skipinitialspace=True), [])
    except csv.Error as exc:
        log.error(f"The line cannot be split into cells ({exc}).", kind="syntax", line=number)
        return []


def row_cost(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


READER = EvidenceReader(INFO, rank=160, sniff=sniff, read=read, doc=__doc__ or "")
