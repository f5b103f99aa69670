"""The Windows ML placement record (`placement/<policy_id>.winml.json`,
`schemas/windows-ml-placement.schema.json`, format `windows-ml-placement/1`), documented in
docs/evidence-formats.md: what a harness records per compute policy after Windows ML chose
the execution provider and compiled the model ahead of time.

With `nodes` (which provider ran each node), one row per node: `provider` = its
`execution_provider`, `device` = its `device_type` (CPU/GPU/NPU) where given, else from the
provider name; a node without a provider is `unknown`. Without `nodes`, one row stands for
the whole compiled model: `node` empty, `provider` and `device` those of the first (highest
priority) `assigned` entry. No cost, no lines (faults carry JSON pointers). `meta` keeps the
selection (policy such as MAX_EFFICIENCY, or the providers appended), the compilation
outcome, the assigned providers and devices, and `granularity` (`node` or `model`); a failed
compilation and a CPU-only assignment are noted in `meta["notes"]`.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from auditor.readers import identity
from auditor.readers._common import EvidenceReader, FaultLog, ReaderInfo
from auditor.readers.base import Read
from auditor.readers.placement import _frame

INFO = ReaderInfo(
    name="windows-ml",
    family="placement",
    tool="Windows ML",
    extensions=(".json",),
    description="Windows ML placement record (windows-ml-placement/1, documented here)",
)


def sniff(head: bytes) -> bool:
    return head.lstrip().startswith(b"{") and b'"windows-ml-placement/1"' in head


def read(data: bytes, *, name: str, **_: Any) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "Windows ML", "format": "windows-ml-placement/1"}
    doc, bad = _frame.json_record(
        data, log, "windows_ml_placement", "The Windows ML placement record"
    )
    if doc is None:
        return Read(None, log.faults(), meta)
    for key in (
        "policy_id",
        "model_sha256",
        "os_build",
        "onnxruntime_version",
        "captured_at",
        "selection",
        "compilation",
        "assigned",
    ):
        meta[key] = doc.get(key)
    meta["session_recorded"] = True  # a record of the session as compiled and assigned
    if isinstance(doc.get("assigned"), list):
        meta["runtime"] = "windows-ml"
    first = next((a for a in doc.get("assigned") or [] if isinstance(a, dict)), None)
    if first is not None:
        provider = first.get("execution_provider")
        meta["session_provider"] = provider if isinstance(provider, str) else None
    assigned = [
        a
        for i, a in enumerate(doc.get("assigned") or [])
        if isinstance(a, dict) and not _frame.is_bad(f"/assigned/{i}", bad)
    ]
    meta["identity"] = identity.Identity(
        gpus=identity.gpus_of(
            {"name": a.get("device_name")}
            for a in assigned
            if str(a.get("device_type")).upper() == "GPU"
        )
    )
    notes = meta.setdefault("notes", [])
    compilation = got if isinstance(got := doc.get("compilation"), dict) else {}
    if compilation.get("aot") and compilation.get("succeeded") is False:
        meta["fallback_reason"] = (
            f"AOT compilation failed: {compilation.get('error') or 'no message'}"
        )
        notes.append(f"{meta['fallback_reason']}.")
    if assigned and all(_device(a) == "cpu" for a in assigned):
        notes.append("Only CPU execution providers are assigned.")
    nodes = doc.get("nodes")
    if isinstance(nodes, list):
        meta["granularity"] = "node"
        rows = [
            {
                "node": n["name"],
                "op_type": n.get("op_type"),
                "provider": n.get("execution_provider"),
                "device": _device(n),
            }
            for i, n in enumerate(nodes)
            if isinstance(n, dict) and not _frame.is_bad(f"/nodes/{i}", bad)
        ]
    else:
        meta["granularity"] = "model"
        rows = (
            [
                {
                    "node": "",
                    "op_type": None,
                    "provider": assigned[0]["execution_provider"],
                    "device": _device(assigned[0]),
                }
            ]
            if assigned
            else []
        )
    return Read(_frame.finish(rows, log, "node"), log.faults(), meta)


def _device(item: dict[str, Any]) -> str:
    """The item's device type where given, else what its provider's name says."""
    provider = item.get("execution_provider")
    if not provider:
        return "unknown"
    return _frame.device_of(item.get("device_type") or provider)


READER = EvidenceReader(INFO, rank=10, sniff=sniff, read=read, doc=__doc__ or "")
