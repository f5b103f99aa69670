"""Core ML `MLComputePlan` operation report, as a harness logs it (NSLog lines, one per
operation, in program order):

    ... operation ios17.conv, device <MLNeuralEngineComputeDevice: 0x6000036ec0e0>, cost 0.5662%

One row per `operation` line: `node` and `op_type` = the operator name as written (the log
names no node), `provider` = the preferred compute device class (MLCPUComputeDevice,
MLGPUComputeDevice, MLNeuralEngineComputeDevice), `device` normalized (`placement._frame`),
`cost` = the estimated cost as a fraction (`estimatedCostOfMLProgramOperation`; the log
prints it in percent), `line` = the line. An operation logged without a device (`device
(null)`, `<none>`) is `unknown`: not an operation with placement information. A line
`....` means the log was cut short there (a `truncated` warning: the shares cover only the
operations listed). Shares are then operations on the Neural Engine / operations with
placement information and the cost share likewise (`placement_shares`).
"""

from __future__ import annotations

import re
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
from auditor.readers.placement.coreml_profiling_csv import row_cost

INFO = ReaderInfo(
    name="coreml-compute-plan",
    family="placement",
    tool="Core ML (MLComputePlan)",
    extensions=(".log", ".txt"),
    description="Core ML MLComputePlan per-operation device and estimated cost (log lines)",
)

_OP = re.compile(
    r"\boperation (?P<op>\S+?), device (?:<(?P<dev>\w+)(?::[^>]*)?>|(?P<none>\S+))"
    r"(?:, cost (?P<cost>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?P<pct>%)?)?\s*$"
)
_MODEL = re.compile(r"the mlmodelc directory: (?P<path>\S+)")


def sniff(head: bytes) -> bool:
    return b"operation " in head and b", device <ML" in head and b"ComputeDevice" in head


def read(data: bytes, *, name: str, **_: Any) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "Core ML", "format": "MLComputePlan log"}
    if too_large(data, MAX_LOG_BYTES, log, "The compute-plan log"):
        return Read(None, log.faults(), meta)
    decoded = decode(data, log)
    if decoded is None:
        return Read(None, log.faults(), meta)
    rows = []
    for i, raw in enumerate(split_lines(decoded[0]), start=1):
        if m := _MODEL.search(raw):
            meta["model"] = m["path"]
        elif raw.strip() in ("....", "...", "…"):
            log.warning(
                "The log is cut short here: the shares cover only the operations listed before.",
                kind="truncated",
                line=i,
            )
        elif "operation " in raw and (m := _OP.search(raw)):
            cost = row_cost(m["cost"]) if m["cost"] else None
            if cost is not None and m["pct"]:
                cost /= 100
            elif m["cost"] and cost is None:
                log.warning(
                    "The operation's cost is no finite figure: cost unknown.",
                    kind="type",
                    line=i,
                    value=m["cost"],
                )
            rows.append(
                {
                    "node": m["op"],
                    "op_type": m["op"],
                    "provider": m["dev"],
                    "device": _frame.device_of(m["dev"]),
                    "cost": cost,
                    "line": i,
                }
            )
        elif "operation " in raw and ", device" in raw:
            log.error(
                "An operation line that cannot be read: left out.", kind="syntax", line=i, value=raw
            )
    meta["operations"] = len(rows)
    return Read(_frame.finish(rows, log), log.faults(), meta)


READER = EvidenceReader(INFO, rank=170, sniff=sniff, read=read, doc=__doc__ or "")
