"""Where each policy of a protocol B run really ran, from its raw placement evidence (an ONNX
Runtime profile or assignment record, a Core ML compute plan or per-operation report, a
Windows ML record, our runner's torch record), read by whichever reader took the file; the
frame and the reader's facts about the file (`meta`) say what is known, never the reader's
name.

**Shares**: `auditor.readers.placement._frame.placement_shares` over the policy's placement
frame against its accelerator (`accelerator_of`); an ONNX Runtime policy that names its
execution provider counts the nodes of exactly that provider (the runner's rule); a record
of dispatched operators (`meta["dispatched_by_devices"]`: our runner's torch diagnostic
pass) counts the aten operators whose outputs all lie on the accelerator. A file is of this
session when its capture time lies between the declaration and the last trial's end, give
or take `CAPTURE_MARGIN_S`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from auditor.protocols.b.facts.claims import FLOAT_EPS
from auditor.protocols.b.facts.declared import Policy, policies
from auditor.protocols.b.facts.trials import run_span
from auditor.protocols.cache import per_view
from auditor.readers import evidence_kinds, timestamps
from auditor.readers.placement._frame import ACCELERATORS, device_of, placement_shares

if TYPE_CHECKING:
    from auditor.protocols.b.view import Evidence, RunView

CAPTURE_MARGIN_S = 3600.0
"""Placement evidence is of this session when captured between the declaration and the
last trial's end, give or take this (clocks, a diagnostic pass before the declaration)."""

COMPUTE_OPS = frozenset({
    "Gather", "GatherElements", "GatherND", "Gemm", "MatMul", "MatMulInteger", "FusedMatMul",
    "QGemm", "QLinearMatMul", "Conv", "ConvTranspose", "FusedConv", "QLinearConv", "Loop",
    "Attention", "MultiHeadAttention", "Softmax", "Einsum", "EmbedLayerNormalization",
    "LayerNormalization", "SkipLayerNormalization", "EmbeddingBag", "ios17.conv",
    "ios17.linear", "ios17.matmul", "ios16.softmax"})
"""Operator types that do a model's arithmetic (embedding gathers, matrix products,
convolutions, reductions (`Reduce*`), attention), as against shape and cast operations an
execution provider may leave on the CPU on purpose."""


def is_compute_op(op_type: str | None) -> bool:
    return bool(op_type) and (op_type in COMPUTE_OPS or op_type.startswith("Reduce"))


@dataclass(frozen=True)
class Placement:
    """A policy's placement evidence and its shares."""

    policy_id: str
    files: tuple[str, ...]
    used: str | None
    """The file the shares come from: the one the manifest names, else the most specific
    reader's (a runner record before a raw profile)."""
    reader: str | None
    tool: str | None
    nodes: int = 0
    placed: int = 0
    operation_share: float | None = None
    cost_share: float | None = None
    cpu_node_share: float | None = None
    by_device: Mapping[str, int] = field(default_factory=dict)
    compute_ops: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """Compute operator type -> device -> nodes."""
    gpu_share: float | None = None
    fallback: str | None = None
    """How the runtime ran elsewhere than asked (ORT's silent fallback, a Windows ML
    assignment to the CPU, a failed compilation), in words."""
    assigned: tuple[Mapping[str, Any], ...] = ()
    """The session's providers and devices after compilation (a Windows ML record)."""
    session_recorded: bool = False
    """Whether the file records the session as compiled and assigned (`meta["assigned"]`:
    a Windows ML record), not only the operations' placement."""
    captured_at: float | None = None
    record_policy: str | None = None
    """The policy the file says it records (our runner's and Windows ML records)."""
    model_sha256: str | None = None
    """The SHA-256 of the model the file says it placed (ORT and Windows ML records)."""
    problem: str | None = None
    """Why there are no shares (no placed operation, an unreadable file)."""


def _text(meta: Mapping[str, Any], key: str) -> str | None:
    v = meta.get(key)
    return v if isinstance(v, str) else None


def _dispatched(meta: Mapping[str, Any], accel: frozenset[str]
                ) -> tuple[float | None, float | None]:
    """(accelerator share, CPU share) of a record of dispatched operators: the operators
    whose outputs all lie on the accelerator (on the CPU) over every dispatched one."""
    disp = meta.get("dispatched_by_devices") or {}
    total = sum(c for d, c in disp.items() if d != "none")
    if not total:
        return None, None
    on = sum(c for d, c in disp.items() if d != "none" and all(
        device_of(x) in accel for x in d.split(",")))
    cpu = sum(c for d, c in disp.items() if d != "none" and all(
        device_of(x) == "cpu" for x in d.split(",")))
    return on / total, cpu / total


def _fallback(meta: Mapping[str, Any]) -> str | None:
    comp = meta.get("compilation") if isinstance(meta.get("compilation"), Mapping) else {}
    if comp.get("aot") and comp.get("succeeded") is False:
        return f"AOT compilation failed: {comp.get('error') or 'no message'}"
    if meta.get("fallback"):
        return "; ".join(meta.get("notes") or []) or "the runtime fell back"
    return None


def _placement(pid: str, pol: Policy | None, files: tuple[Evidence, ...]) -> Placement:
    declared = pol.placement_file if pol else None
    usable = [f for f in files if f.usable]
    pick = next((f for f in usable if f.path == declared), None) or (
        min(usable, key=lambda f: evidence_kinds.rank(f.reader)) if usable else None)
    names = tuple(f.path for f in files)
    if pick is None:
        return Placement(pid, names, None, None, None,
                         problem="no placement file could be read")
    meta = pick.meta
    diag = meta.get("diagnostic") if isinstance(meta.get("diagnostic"), Mapping) else {}
    known = {"policy_id": pid, "files": names, "used": pick.path, "reader": pick.reader,
             "tool": pick.tool, "record_policy": _text(meta, "policy_id"),
             "model_sha256": _text(meta, "model_sha256"),
             "captured_at": timestamps.epoch_s(meta.get("captured_at"))
             or timestamps.epoch_s(diag.get("started_at")),
             "fallback": _fallback(meta),
             "assigned": tuple(a for a in meta.get("assigned") or [] if isinstance(a, Mapping)),
             "session_recorded": "assigned" in meta}
    frame = pick.frame
    if frame is None or frame.filter(pl.col("device") != "unknown").is_empty():
        return Placement(**known,
                         problem="; ".join(pick.content)
                         or "no operation with placement information")
    accel = pol.accelerator if pol and pol.accelerator else ACCELERATORS
    counted = frame
    if pol and pol.provider and frame["provider"].is_not_null().any():
        # the nodes of exactly the provider asked for (the runner's rule)
        counted = frame.with_columns(
            pl.when(pl.col("device") == "unknown").then(pl.lit("unknown"))
            .when(pl.col("provider") == pol.provider).then(pl.lit("accel"))
            .when(pl.col("device").is_in(list(accel))).then(pl.lit("other"))
            .otherwise(pl.col("device")).alias("device"))
        accel = frozenset({"accel"})
    shares = placement_shares(counted, accel)
    accelerator_policy = pol is None or pol.role == "accelerator"
    op_share = shares["operation_share"] if accelerator_policy else None
    cost_share = shares["cost_share"] if accelerator_policy else None
    cpu_share = shares["cpu_node_share"]
    if "dispatched_by_devices" in meta and accelerator_policy:
        op_share, cpu_share = _dispatched(meta, pol.accelerator if pol and pol.accelerator
                                          else ACCELERATORS)
        cost_share = None  # a record of dispatched operators carries no cost estimate
    compute: dict[str, dict[str, int]] = {}
    for op, dev in frame.select("op_type", "device").iter_rows():
        if is_compute_op(op):
            by = compute.setdefault(op, {})
            by[dev] = by.get(dev, 0) + 1
    return Placement(**known, nodes=shares["nodes"], placed=shares["ops_with_placement"],
                     operation_share=op_share, cost_share=cost_share, cpu_node_share=cpu_share,
                     by_device=placement_shares(frame)["by_device"], compute_ops=compute,
                     gpu_share=placement_shares(frame, {"gpu"})["operation_share"])


@per_view
def placements(view: RunView) -> dict[str, Placement]:
    """Per policy with placement files, its shares (the module's rules)."""
    pols = policies(view)
    return {pid: _placement(pid, pols.get(pid), files)
            for pid, files in view.placement.items()}


def capture_outside(view: RunView, p: Placement) -> str | None:
    """Why P's capture time (where its format records one) is not of this run's session."""
    if p.captured_at is None:
        return None
    start, end = run_span(view)
    if start is not None and p.captured_at < start - CAPTURE_MARGIN_S:
        return "captured before the run was declared"
    if end is not None and p.captured_at > end + CAPTURE_MARGIN_S:
        return "captured after the run's last trial"
    return None


def placement_of_other(view: RunView, p: Placement) -> str | None:
    """Why P's file (where its format names them) records another policy or another model
    than the policy it stands for: the record's `policy_id`, and its model's SHA-256 against
    the artifact the policy declares it runs (`policies[].artifact_sha256`)."""
    pol = policies(view).get(p.policy_id)
    if p.record_policy is not None and p.record_policy != p.policy_id:
        return f"it records policy {p.record_policy!r}, not {p.policy_id!r}"
    want = pol.artifact_sha256 if pol is not None else None
    if p.model_sha256 is not None and isinstance(want, str) \
            and p.model_sha256.lower() != want.lower():
        return (f"it placed the model {p.model_sha256[:16]}..., the policy runs the artifact "
                f"{want[:16]}...")
    return None


def residency(view: RunView, pid: str) -> str | None:
    """Why accelerator policy PID did not run on its accelerator (a fallback, a share below
    its floor, no declared floor), or None when it did (or there is no evidence to say)."""
    pol = policies(view).get(pid)
    p = placements(view).get(pid)
    if pol is None or pol.role != "accelerator" or p is None or p.problem:
        return None
    if p.fallback:
        return p.fallback
    if pol.floor is None:
        return "no operation-share floor is declared for it"
    if p.operation_share is None:
        return "its placement evidence gives no operation share"
    if p.operation_share < pol.floor - FLOAT_EPS:
        where = "/".join(sorted(pol.accelerator))
        return (f"{p.operation_share:.2%} of its operations ran on {where}, below the "
                f"declared floor of {pol.floor:.2%}")
    return None
