"""The placement frame every placement reader returns (built from
`schemas/placement-nodes.frame.json`), the one table that maps a tool's provider or compute
device name to a normalized device, and `placement_shares`, the summary protocol B uses.

Provider / device name -> device (case-insensitive; a torch device string such as
``cuda:1`` is looked up by what comes before the colon):

| device | provider / compute device names |
| --- | --- |
| cpu | CPUExecutionProvider, XnnpackExecutionProvider, DnnlExecutionProvider, |
| | ACLExecutionProvider, ArmNNExecutionProvider; MLCPUComputeDevice, bnns, classic_cpu |
| gpu | CUDAExecutionProvider, TensorrtExecutionProvider, NvTensorRTRTXExecutionProvider, |
| | ROCMExecutionProvider, MIGraphXExecutionProvider, DmlExecutionProvider, |
| | WebGpuExecutionProvider; MLGPUComputeDevice, mps_graph; torch mps, cuda, xpu, rocm |
| npu | QNNExecutionProvider (its default HTP backend), VitisAIExecutionProvider, |
| | RknpuExecutionProvider |
| ane | MLNeuralEngineComputeDevice, ane |
| unknown | OpenVINOExecutionProvider, CoreMLExecutionProvider, NnapiExecutionProvider (the |
| | device is chosen at run time, not named), anything else, or nothing |

Windows ML hardware device types CPU / GPU / NPU map to cpu / gpu / npu.
`unknown` is never counted as CPU, nor as an operation with placement information.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

import polars as pl

import schemas
from auditor.readers._common import MAX_DOCUMENT_BYTES, FaultLog, decode, frame_schema, too_large

if TYPE_CHECKING:
    from auditor.readers.identity import Identity


class PlacementMeta(TypedDict, total=False):
    """What a placement reader says about the file beside its frame (`Read.meta`): the keys
    protocols read, each documented in schemas/placement-nodes.frame.json (`meta`). A reader
    writes only the keys its format gives (tests/readers/test_meta_contract.py)."""

    tool: str
    format: str
    policy_id: str | None
    model_sha256: str | None
    model: str | None
    captured_at: str | None
    diagnostic: Mapping[str, Any] | None
    compilation: Mapping[str, Any] | None
    fallback: bool
    fallback_reason: str
    notes: list[str]
    assigned: list[Any] | None
    profile_file: str | None
    dispatched_by_devices: dict[str, int]
    runtime: str
    session_provider: str | None
    session_recorded: bool
    identity: Identity
    selection: Mapping[str, Any] | None
    session_options: Mapping[str, Any] | None


DEVICES = ("cpu", "gpu", "ane", "npu", "unknown")
TRANSFER_OPS = frozenset({"MemcpyFromHost", "MemcpyToHost"})
"""Operator types that copy tensors between devices, which ONNX Runtime inserts itself at
each boundary between providers (a CUDA session's `Memcpy` nodes): not compute operations.
`placement_shares` counts them apart (`transfers`), out of every share."""
#: What `placement_shares` counts as the accelerator when the caller names none.
ACCELERATORS = frozenset({"gpu", "ane", "npu"})

_DEVICE_OF: dict[str, str] = {
    name.lower(): device
    for device, names in {
        "cpu": (
            "CPUExecutionProvider",
            "XnnpackExecutionProvider",
            "DnnlExecutionProvider",
            "ACLExecutionProvider",
            "ArmNNExecutionProvider",
            "MLCPUComputeDevice",
            "bnns",
            "classic_cpu",
            "cpu",
        ),
        "gpu": (
            "CUDAExecutionProvider",
            "TensorrtExecutionProvider",
            "NvTensorRTRTXExecutionProvider",
            "ROCMExecutionProvider",
            "MIGraphXExecutionProvider",
            "DmlExecutionProvider",
            "WebGpuExecutionProvider",
            "MLGPUComputeDevice",
            "mps_graph",
            "mps",
            "cuda",
            "xpu",
            "rocm",
            "gpu",
        ),
        "npu": (
            "QNNExecutionProvider",
            "VitisAIExecutionProvider",
            "RknpuExecutionProvider",
            "npu",
        ),
        "ane": ("MLNeuralEngineComputeDevice", "ane"),
        "unknown": (
            "OpenVINOExecutionProvider",
            "CoreMLExecutionProvider",
            "NnapiExecutionProvider",
        ),
    }.items()
    for name in names
}


def device_of(provider: str | None) -> str:
    """The normalized device of a provider or compute-device name (table above)."""
    if not provider:
        return "unknown"
    key = provider.strip().lower()
    if key in _DEVICE_OF:
        return _DEVICE_OF[key]
    return _DEVICE_OF.get(key.split(":", 1)[0], "unknown")


def schema() -> pl.Schema:
    """The polars schema of the placement frame, column order included."""
    return frame_schema("placement_nodes")


def from_rows(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    s = schema()
    return pl.DataFrame({n: [r.get(n) for r in rows] for n in s}, schema=s)


def placement_shares(
    frame: pl.DataFrame, accelerator: Iterable[str] = ACCELERATORS
) -> dict[str, Any]:
    """The shares protocol B asks for (B5, B8), from a placement frame.

    operation_share = operations on the accelerator / operations with placement information
    (device not `unknown`); cost_share likewise over the `cost` of placed operations that
    have one; cpu_node_share = CPU operations / operations with placement information.
    Copies between devices (`TRANSFER_OPS`) are no operations: they are counted apart
    (`transfers`, their cost `transfer_cost`, per device `transfers_by_device`) and left out
    of every share. Shares are None when their denominator is 0. `nodes`, `by_device` and
    `by_op_type` count every node, copies included."""
    accel = sorted(set(accelerator))
    is_transfer = pl.col("op_type").is_in(list(TRANSFER_OPS)).fill_null(False)
    transfers = frame.filter(is_transfer)
    placed = frame.filter((pl.col("device") != "unknown") & ~is_transfer)
    on_accel = placed.filter(pl.col("device").is_in(accel))
    n_placed, n_accel = placed.height, on_accel.height
    # the cost column is Float64: its sums are floats
    cost_placed = (
        cast(float, placed["cost"].sum()) if placed["cost"].null_count() < n_placed else None
    )
    cost_accel = cast(float, on_accel["cost"].sum()) if cost_placed is not None else None
    cpu = placed.filter(pl.col("device") == "cpu").height
    by_type: dict[str, dict[str, int]] = {}
    for r in (
        frame.group_by("op_type", "device")
        .len()
        .sort("op_type", "device", nulls_last=True)
        .iter_rows(named=True)
    ):
        by_type.setdefault(r["op_type"] or "", {})[r["device"]] = r["len"]
    return {
        "accelerator": accel,
        "nodes": frame.height,
        "ops_with_placement": n_placed,
        "ops_on_accelerator": n_accel,
        "operation_share": n_accel / n_placed if n_placed else None,
        "cost_with_placement": cost_placed,
        "cost_on_accelerator": cost_accel,
        "cost_share": cost_accel / cost_placed if cost_placed and cost_accel is not None else None,
        "placed_without_cost": placed["cost"].null_count(),
        "cpu_node_share": cpu / n_placed if n_placed else None,
        "transfers": transfers.height,
        "transfer_cost": transfers["cost"].sum()
        if transfers["cost"].null_count() < transfers.height
        else None,
        "transfers_by_device": {
            d: n for d, n in transfers.group_by("device").len().sort("device").iter_rows()
        },
        "by_device": {
            d: frame.filter(pl.col("device") == d).height
            for d in DEVICES
            if frame.filter(pl.col("device") == d).height
        },
        "by_op_type": by_type,
    }


def json_record(
    data: bytes, log: FaultLog, schema_kind: str, what: str
) -> tuple[dict[str, Any] | None, set[str]]:
    """A JSON record checked against its schema: the document (None when it is not a JSON
    object) and the JSON pointers of the items at fault, one `schema` fault each, so the
    reader keeps every good node and leaves out the bad ones."""
    if too_large(data, MAX_DOCUMENT_BYTES, log, what):
        return None, set()
    decoded = decode(data, log, encodings=("utf-8",), what=what)
    if decoded is None:
        return None, set()
    try:
        doc = json.loads(decoded[0])
    except ValueError as exc:
        log.error(
            f"{what} is not JSON ({getattr(exc, 'msg', exc)}).",
            kind="syntax",
            line=getattr(exc, "lineno", None),
            column=getattr(exc, "colno", None),
        )
        return None, set()
    except RecursionError:
        log.error(f"{what} nests too deeply to read.", kind="limit")
        return None, set()
    if not isinstance(doc, dict):
        log.error(f"{what} is not a JSON object.", kind="schema", pointer="")
        return None, set()
    bad: set[str] = set()
    for error in sorted(
        schemas.validator(schema_kind).iter_errors(doc),
        key=lambda e: [str(p) for p in e.absolute_path],
    ):
        pointer = "/" + "/".join(str(p) for p in error.absolute_path)
        bad.add(pointer)
        log.error(f"{error.message}.", kind="schema", pointer=pointer)
    return doc, bad


def _costed(row: dict[str, Any], log: FaultLog, what: str) -> dict[str, Any]:
    cost = row.get("cost")
    if cost is None:
        return row
    try:
        value = float(cost)
    except (OverflowError, TypeError, ValueError):
        value = math.inf
    if math.isfinite(value) and value >= 0:
        return {**row, "cost": value}
    log.warning(
        f"The {what} {row.get('node')!r} has a cost that is no finite non-negative "
        "number: its cost is unknown.",
        kind="type",
        line=row.get("line"),
        value=cost if isinstance(cost, str) else repr(cost)[:40],
    )
    return {**row, "cost": None}


def is_bad(pointer: str, bad: set[str]) -> bool:
    """Whether the item at `pointer` or anything inside it is at fault."""
    return any(b == pointer or b.startswith(pointer + "/") for b in bad)


def finish(
    rows: list[dict[str, Any]], log: FaultLog, what: str = "operation"
) -> pl.DataFrame | None:
    """The frame of `rows`, or None (an `empty` error) when there is none; an `empty` error
    too when no row carries placement information (every device unknown). A cost that is no
    finite non-negative number (a 400-digit count, inf, a negative time) is dropped with a
    `type` warning naming the node: every placement reader builds its frame here, so no
    share can become infinite or NaN."""
    if not rows:
        log.error(f"No {what} with placement evidence in the file.", kind="empty")
        return None
    rows = [_costed(r, log, what) for r in rows]
    frame = from_rows(rows)
    if frame.filter(pl.col("device") != "unknown").is_empty():
        log.error(
            f"No {what} carries placement information (every provider or device is "
            "missing or unknown): shares cannot be computed.",
            kind="empty",
        )
    return frame
