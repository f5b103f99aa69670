"""Our runner's torch placement record (`placement/<policy_id>.torch.json`,
`schemas/torch-placement.schema.json`, format `torch-placement/1`).

The frame is the device map: one row per parameter or buffer tensor (`tensors`), `node` =
its name, `op_type` = `parameter` / `buffer`, `provider` = the torch device string
(`cuda:0`), `device` normalized, `cost` = its element count (numel), so the cost share is the
share of the model's elements on the accelerator. Without `tensors`, the `parameters` and
`buffers` device counts give one unnamed row per tensor (no cost), up to `MAX_TENSORS`.

The profiler's op table stays in `meta`: `ops_by_device` counts every event by device type,
`kernels_by_device` only device kernels (`is_kernel`; under CUDA the `aten::*` events are
CPU-side launches, so GPU work is counted from the CUDA-device kernels), and `ops` the
number of (name, device_type) entries. The aten operators the diagnostic pass dispatched
(`dispatched_ops`, written by the runner's `TorchDispatchMode`) are counted in
`meta["dispatched_by_devices"]` by the devices of their outputs as written (`cpu`,
`cuda:0`, `cpu,cuda:0`, `none` for an operator without a tensor output).
`requested_device`, `torch_version` and the diagnostic pass are kept as written.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import polars as pl

from auditor.readers._common import EvidenceReader, FaultLog, ReaderInfo
from auditor.readers.base import Read
from auditor.readers.placement import _frame

INFO = ReaderInfo(
    name="torch-record",
    family="placement",
    tool="our runner (torch)",
    extensions=(".json",),
    description="gpubench runner torch placement record (torch-placement/1)",
)

#: Rows made from device counts alone; a count beyond this is not a model's tensor count.
MAX_TENSORS = 1_000_000


def sniff(head: bytes) -> bool:
    return head.lstrip().startswith(b"{") and b'"torch-placement/1"' in head


def read(data: bytes, *, name: str, **_: Any) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "gpubench runner", "format": "torch-placement/1"}
    doc, bad = _frame.json_record(data, log, "torch_placement", "The torch placement record")
    if doc is None:
        return Read(None, log.faults(), meta)
    for key in (
        "policy_id",
        "requested_device",
        "torch_version",
        "parameters",
        "buffers",
        "diagnostic",
    ):
        meta[key] = doc.get(key)
    ops = [
        o
        for i, o in enumerate(doc.get("ops") or [])
        if isinstance(o, dict) and not _frame.is_bad(f"/ops/{i}", bad)
    ]
    every, kernels = Counter[str](), Counter[str]()
    for o in ops:
        every[o["device_type"]] += o["count"]
        if o.get("is_kernel"):
            kernels[o["device_type"]] += o["count"]
    meta.update(ops=len(ops), ops_by_device=dict(every), kernels_by_device=dict(kernels))
    dispatched = Counter[str]()
    for d in doc.get("dispatched_ops") or []:
        if (
            isinstance(d, dict)
            and isinstance(d.get("devices"), str)
            and isinstance(d.get("count"), int)
            and not isinstance(d["count"], bool)
        ):
            dispatched[d["devices"]] += d["count"]
    meta["dispatched_by_devices"] = dict(dispatched)
    meta["runtime"] = "torch"
    tensors = doc.get("tensors")
    if isinstance(tensors, list):
        rows = [
            {
                "node": t["name"],
                "op_type": t["kind"],
                "provider": t["device"],
                "device": _frame.device_of(t["device"]),
                "cost": t.get("numel"),
            }
            for i, t in enumerate(tensors)
            if isinstance(t, dict) and not _frame.is_bad(f"/tensors/{i}", bad)
        ]
    else:
        rows = _from_counts(doc, bad, log)
    return Read(_frame.finish(rows, log, "tensor"), log.faults(), meta)


def _from_counts(doc: dict[str, Any], bad: set[str], log: FaultLog) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for kind, key in (("parameter", "parameters"), ("buffer", "buffers")):
        counts = doc.get(key)
        if not isinstance(counts, dict) or _frame.is_bad(f"/{key}", bad):
            continue
        for device, n in counts.items():
            if len(rows) + n > MAX_TENSORS:
                log.error(
                    f"More than {MAX_TENSORS:,} tensors: not a model's device map.",
                    kind="limit",
                    pointer=f"/{key}",
                )
                return rows
            rows += [
                {
                    "node": "",
                    "op_type": kind,
                    "provider": device,
                    "device": _frame.device_of(device),
                }
            ] * n
    return rows


READER = EvidenceReader(INFO, rank=30, sniff=sniff, read=read, doc=__doc__ or "")
