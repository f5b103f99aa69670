"""Our runner's ONNX Runtime placement record (`placement/<policy_id>.ort.json`,
`schemas/ort-placement.schema.json`, format `ort-placement/1`).

One row per `nodes` item: `node` = name, `op_type`, `provider` as written, `device`
normalized (`placement._frame`); a null provider is `unknown`, never CPU. The record gives
no cost and no lines (`cost`, `line` null; faults carry JSON pointers). `meta` keeps the
requested and active providers, where the assignment came from (`graph_assignment_info`
or `profile`), and `fallback`: ORT silently falls back to the CPU, so the active first
provider differing from the requested one is noted. A record whose `source` is `none` has
no nodes: there is nothing to compute shares from, an `empty` error.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from auditor.readers._common import EvidenceReader, FaultLog, ReaderInfo
from auditor.readers.base import Read
from auditor.readers.placement import _frame

INFO = ReaderInfo(
    name="ort-record",
    family="placement",
    tool="our runner (ONNX Runtime)",
    extensions=(".json",),
    description="gpubench runner ORT placement record (ort-placement/1)",
)


def sniff(head: bytes) -> bool:
    return head.lstrip().startswith(b"{") and b'"ort-placement/1"' in head


def read(data: bytes, *, name: str, **_: Any) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "gpubench runner", "format": "ort-placement/1"}
    doc, bad = _frame.json_record(data, log, "ort_placement", "The ORT placement record")
    if doc is None:
        return Read(None, log.faults(), meta)
    for key in (
        "policy_id",
        "model_sha256",
        "ort_version",
        "requested_providers",
        "active_providers",
        "source",
        "profile_file",
        "diagnostic",
        "session_options",
    ):
        meta[key] = doc.get(key)
    requested, active = doc.get("requested_providers"), doc.get("active_providers")
    if isinstance(active, list) and active and isinstance(active[0], str):
        meta["session_provider"] = active[0]
    if isinstance(requested, list) and isinstance(active, list) and requested and active:
        meta["fallback"] = active[0] != requested[0]
        if meta["fallback"]:
            meta["fallback_reason"] = (
                f"ORT fell back: {requested[0]} was requested, {active[0]} is active."
            )
            meta.setdefault("notes", []).append(meta["fallback_reason"])
    nodes = got if isinstance(got := doc.get("nodes"), list) else []
    rows = [
        {
            "node": n["name"],
            "op_type": n.get("op_type"),
            "provider": n.get("provider"),
            "device": _frame.device_of(n.get("provider")),
        }
        for i, n in enumerate(nodes)
        if isinstance(n, dict) and not _frame.is_bad(f"/nodes/{i}", bad)
    ]
    return Read(_frame.finish(rows, log, "node"), log.faults(), meta)


READER = EvidenceReader(INFO, rank=20, sniff=sniff, read=read, doc=__doc__ or "")
