"""What each placement file of a protocol B policy says, read on its own (an ONNX Runtime
profile or assignment record, a Core ML compute plan or per-operation report, a Windows ML
record, our runner's torch record), by whichever reader took the file; the frame and the
reader's facts about the file (`meta`) say what is known, never the reader's name. And which
of a policy's files decides, where two of them disagree. What the policy's placement means
for the run (its runtime, its residency, whose file it is): `placement`.

**Shares**: `auditor.readers.placement._frame.placement_shares` over the policy's placement
frame against its accelerator (`accelerator_of`); an ONNX Runtime policy that names its
execution provider counts the nodes of exactly that provider (the runner's rule); a record
of dispatched operators (`meta["dispatched_by_devices"]`: our runner's torch diagnostic
pass) counts the aten operators whose outputs all lie on the accelerator.

**Which file decides** (raw evidence over a record derived from it): a policy's files are
each read on their own; the shares come from the one the manifest names, else the most
specific reader's (a runner record before a raw profile). When another file of the policy
says something else (another fallback, a residency verdict on the other side of the floor,
a node its name places on another device), the two disagree: the raw file decides (the one
the record names as its source, `meta["profile_file"]`; else the one less favourable to
residency), and the disagreement is a finding (B0405).

**Operations a report marks invalid** (B0406): a per-operation cost report (a file that
estimates the cost of its placed operations) that gives an operation no estimate on the
device it names has not shown that device can run it: Core ML's E5RT profiling leaves a
backend it marks invalid ("Unsupported tensor format") without an estimate, and the readers
expose that absence (a null `cost`), not the mark itself. Such an operation counts as
placed, never on the accelerator.

**The runtime a file is evidence of**: the runtime its reader says it records
(`meta["runtime"]`: a compiled and assigned Windows ML session, a torch record of
dispatched operators), else the frame's providers: Core ML compute devices
(MLNeuralEngineComputeDevice, ane, bnns, ...) are Core ML, execution providers ONNX
Runtime; None when the file does not say. Every `meta` key read here is one of the
placement family's (`PlacementMeta`, schemas/placement-nodes.frame.json), whichever reader
wrote it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from auditor.protocols.b.facts.claims import FLOAT_EPS
from auditor.protocols.b.facts.declared import Policy
from auditor.readers import timestamps
from auditor.readers.placement._frame import (
    ACCELERATORS,
    PlacementMeta,
    device_of,
    placement_shares,
)

if TYPE_CHECKING:
    from auditor.protocols.b.view import Evidence

COMPUTE_OPS = frozenset(
    {
        "Gather",
        "GatherElements",
        "GatherND",
        "Gemm",
        "MatMul",
        "MatMulInteger",
        "FusedMatMul",
        "QGemm",
        "QLinearMatMul",
        "Conv",
        "ConvTranspose",
        "FusedConv",
        "QLinearConv",
        "Loop",
        "Attention",
        "MultiHeadAttention",
        "Softmax",
        "Einsum",
        "EmbedLayerNormalization",
        "LayerNormalization",
        "SkipLayerNormalization",
        "EmbeddingBag",
        "ios17.conv",
        "ios17.linear",
        "ios17.matmul",
        "ios16.softmax",
    }
)
"""Operator types that do a model's arithmetic (embedding gathers, matrix products,
convolutions, reductions (`Reduce*`), attention), as against shape and cast operations an
execution provider may leave on the CPU on purpose."""
TENSOR_KINDS = frozenset({"parameter", "buffer"})
"""`op_type` of a placement row that is a model tensor (torch: where every parameter and
buffer lies), not an operation."""

COREML_DEVICES = frozenset(
    {
        "mlcpucomputedevice",
        "mlgpucomputedevice",
        "mlneuralenginecomputedevice",
        "ane",
        "bnns",
        "classic_cpu",
        "mps_graph",
    }
)
"""The compute devices and backends Core ML's compute plan and E5RT profiling name."""
TORCH_DEVICE_TYPES = frozenset({"cpu", "cuda", "mps", "xpu", "rocm", "meta"})


def is_compute_op(op_type: str | None) -> bool:
    if not op_type:
        return False
    return op_type in COMPUTE_OPS or op_type.startswith("Reduce")


@dataclass(frozen=True)
class Disagreement:
    """Two placement files of one policy that say different things."""

    file: str
    """The file that does not decide (a record, or the more favourable of two raw files)."""
    decides: str
    """The file that decides."""
    why: str


@dataclass(frozen=True)
class Placement:
    """A policy's placement evidence and its shares."""

    policy_id: str
    files: tuple[str, ...]
    used: str | None
    """The file the shares come from: the one the manifest names, else the most specific
    reader's (a runner record before a raw profile); the raw one when the two disagree."""
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
    tensors: Mapping[str, int] = field(default_factory=dict)
    """Device -> model tensors (parameters and buffers) placed there, where the file lists
    them (our runner's torch record)."""
    gpu_share: float | None = None
    fallback: str | None = None
    """How the runtime ran elsewhere than asked (ORT's silent fallback, a Windows ML
    assignment to the CPU, a failed compilation), in words."""
    assigned: tuple[Mapping[str, Any], ...] = ()
    """The session's providers and devices after compilation (a Windows ML record)."""
    compiled_aot: bool | None = None
    """Whether AOT compilation ran and succeeded (a Windows ML record); None: not said."""
    session_recorded: bool = False
    """Whether the file records the session as compiled and assigned (`meta["assigned"]`:
    a Windows ML record), not only the operations' placement."""
    session_provider: str | None = None
    """The execution provider the file says the session holds first (a Windows ML record's
    first assigned provider, an ONNX Runtime record's first active provider)."""
    runtime: str | None = None
    """The runtime the evidence is of (`windows-ml`, `coreml`, `onnxruntime`, `torch`),
    None when the file does not say."""
    captured_at: float | None = None
    record_policy: str | None = None
    """The policy the file says it records (our runner's and Windows ML records)."""
    model_sha256: str | None = None
    """The SHA-256 of the model the file says it placed (ORT and Windows ML records)."""
    model_path: str | None = None
    """The model package the file says it placed (a Core ML log's mlmodelc directory)."""
    truncated: tuple[int, ...] = ()
    """Lines where the report is cut short (0: the reader names none)."""
    invalid: tuple[tuple[int | None, str], ...] = ()
    """(line, operator) of each accelerator operation the report gives no estimate on the
    device it names (B0406): counted as placed, never on the accelerator."""
    disagreements: tuple[Disagreement, ...] = ()
    problem: str | None = None
    """Why there are no shares (no placed operation, an unreadable file)."""


def _text(meta: Mapping[str, Any], key: str) -> str | None:
    v = meta.get(key)
    return v if isinstance(v, str) else None


def _dispatched(meta: PlacementMeta, accel: frozenset[str]) -> tuple[float | None, float | None]:
    """(accelerator share, CPU share) of a record of dispatched operators: the operators
    whose outputs all lie on the accelerator (on the CPU) over every dispatched one."""
    disp = meta.get("dispatched_by_devices") or {}
    total = sum(c for d, c in disp.items() if d != "none")
    if not total:
        return None, None
    on = sum(
        c
        for d, c in disp.items()
        if d != "none" and all(device_of(x) in accel for x in d.split(","))
    )
    cpu = sum(
        c
        for d, c in disp.items()
        if d != "none" and all(device_of(x) == "cpu" for x in d.split(","))
    )
    return on / total, cpu / total


def _aot(meta: PlacementMeta) -> bool | None:
    """Whether a record's session was compiled ahead of time and the compile succeeded (its
    `compilation`; None for a record without one)."""
    comp = meta.get("compilation")
    return bool(comp.get("aot") and comp.get("succeeded")) if isinstance(comp, Mapping) else None


def _runtime(meta: PlacementMeta, frame: pl.DataFrame | None) -> str | None:
    """The runtime the file is evidence of (module docstring), or None."""
    if meta.get("runtime"):
        return meta.get("runtime")
    provs = (
        {p.lower() for p in frame["provider"].drop_nulls().unique().to_list()}
        if frame is not None
        else set()
    )
    if not provs:
        return None
    if provs <= COREML_DEVICES:
        return "coreml"
    if all(p.endswith("executionprovider") for p in provs):
        return "onnxruntime"
    if all(p.split(":", 1)[0] in TORCH_DEVICE_TYPES for p in provs):
        return "torch"
    return None


def _invalid(frame: pl.DataFrame, accel: frozenset[str]) -> pl.Series:
    """Per row: an accelerator operation a cost report gives no estimate on the device it
    names (module docstring), when the file estimates some placed operation."""
    placed = pl.col("device") != "unknown"
    if frame.filter(placed & pl.col("cost").is_not_null()).is_empty():
        return pl.Series("invalid", [False] * frame.height, dtype=pl.Boolean)
    return frame.select(
        (
            pl.col("device").is_in(list(accel))
            & pl.col("cost").is_null()
            & (pl.col("op_type").is_null() | ~pl.col("op_type").is_in(list(TENSOR_KINDS)))
        )
        .fill_null(False)
        .alias("invalid")
    ).to_series()


def _one(pid: str, pol: Policy | None, names: tuple[str, ...], ev: Evidence) -> Placement:
    """What one placement file says of policy PID, read on its own."""
    meta = cast(PlacementMeta, ev.meta)
    diag = got if isinstance(got := meta.get("diagnostic"), Mapping) else {}
    known: dict[str, Any] = {
        "policy_id": pid,
        "files": names,
        "used": ev.path,
        "reader": ev.reader,
        "tool": ev.tool,
        "record_policy": _text(meta, "policy_id"),
        "model_sha256": _text(meta, "model_sha256"),
        "model_path": _text(meta, "model"),
        "captured_at": timestamps.epoch_s(meta.get("captured_at"))
        or timestamps.epoch_s(diag.get("started_at")),
        "fallback": meta.get("fallback_reason"),
        "assigned": tuple(a for a in meta.get("assigned") or [] if isinstance(a, Mapping)),
        "session_recorded": meta.get("session_recorded") is True,
        "session_provider": meta.get("session_provider"),
        "compiled_aot": _aot(meta),
        "runtime": _runtime(meta, ev.frame),
        "truncated": ev.truncated,
    }
    frame = ev.frame
    if frame is None or frame.filter(pl.col("device") != "unknown").is_empty():
        return Placement(
            **known, problem="; ".join(ev.content) or "no operation with placement information"
        )
    accel = pol.accelerator if pol and pol.accelerator else ACCELERATORS
    accelerator_policy = pol is None or pol.role == "accelerator"
    invalid = _invalid(frame, accel) if accelerator_policy else None
    counted = frame
    if invalid is not None and invalid.any():
        counted = frame.with_columns(
            pl.when(invalid).then(pl.lit("other")).otherwise(pl.col("device")).alias("device")
        )
    if pol and pol.provider and frame["provider"].is_not_null().any():
        # the nodes of exactly the provider asked for (the runner's rule)
        counted = counted.with_columns(
            pl.when(pl.col("device").is_in(["unknown", "other"]))
            .then(pl.col("device"))
            .when(pl.col("provider") == pol.provider)
            .then(pl.lit("accel"))
            .when(pl.col("device").is_in(list(accel)))
            .then(pl.lit("other"))
            .otherwise(pl.col("device"))
            .alias("device")
        )
        accel = frozenset({"accel"})
    shares = placement_shares(counted, accel)
    op_share = shares["operation_share"] if accelerator_policy else None
    cost_share = shares["cost_share"] if accelerator_policy else None
    cpu_share = shares["cpu_node_share"]
    if "dispatched_by_devices" in meta and accelerator_policy:
        op_share, cpu_share = _dispatched(
            meta, pol.accelerator if pol and pol.accelerator else ACCELERATORS
        )
        cost_share = None  # a record of dispatched operators carries no cost estimate
    compute: dict[str, dict[str, int]] = {}
    tensors: dict[str, int] = {}
    for op, dev in frame.select("op_type", "device").iter_rows():
        if is_compute_op(op):
            by = compute.setdefault(op, {})
            by[dev] = by.get(dev, 0) + 1
        elif op in TENSOR_KINDS:
            tensors[dev] = tensors.get(dev, 0) + 1
    bad = (
        frame.filter(invalid).select("line", "op_type").rows()
        if invalid is not None and invalid.any()
        else []
    )
    return Placement(
        **known,
        nodes=shares["nodes"],
        placed=shares["ops_with_placement"],
        operation_share=op_share,
        cost_share=cost_share,
        cpu_node_share=cpu_share,
        by_device=placement_shares(frame)["by_device"],
        compute_ops=compute,
        tensors=tensors,
        invalid=tuple((line, op or "") for line, op in bad),
        gpu_share=placement_shares(frame, {"gpu"})["operation_share"],
    )


def _resident(p: Placement, pol: Policy | None) -> bool | None:
    """Whether P shows the policy on its accelerator at its floor (None: cannot say)."""
    if p.problem:
        return None
    if p.fallback:
        return False
    if pol is None or pol.role != "accelerator" or pol.floor is None or p.operation_share is None:
        return None
    return p.operation_share >= pol.floor - FLOAT_EPS


def _named_devices(ev: Evidence) -> dict[str, frozenset[str]]:
    """Node name -> the devices the file places nodes of that name on (unnamed nodes and
    unknown devices left out)."""
    if ev.frame is None:
        return {}
    g = (
        ev.frame.filter((pl.col("node") != "") & (pl.col("device") != "unknown"))
        .group_by("node")
        .agg(pl.col("device").unique())
    )
    return {n: frozenset(d) for n, d in g.iter_rows()}


def _residency_words(p: Placement, pol: Policy | None) -> str:
    if p.fallback:
        return f"a fallback ({p.fallback})"
    floor = f" (floor {pol.floor:.2%})" if pol is not None and pol.floor is not None else ""
    return f"{p.operation_share or 0.0:.2%} of the operations on the accelerator{floor}"


def _disagree(
    a: Placement, ea: Evidence, b: Placement, eb: Evidence, pol: Policy | None
) -> str | None:
    """What two files of one policy say differently, or None. A fallback one file notes is
    judged as what it means, the policy off its accelerator: a raw profile cannot note a
    fallback (it does not know what was asked for), only show where the nodes ran."""
    ra, rb = _resident(a, pol), _resident(b, pol)
    if ra is not None and rb is not None and ra != rb:
        return f"{_residency_words(a, pol)} in {a.used}, {_residency_words(b, pol)} in {b.used}"
    na, nb = _named_devices(ea), _named_devices(eb)
    clash = sorted(n for n in na.keys() & nb.keys() if not na[n] & nb[n])
    if clash:
        n = clash[0]
        return (
            f"{len(clash)} node(s) placed on other devices, e.g. {n!r}: "
            f"{'/'.join(sorted(na[n]))} in {a.used}, {'/'.join(sorted(nb[n]))} in "
            f"{b.used}"
        )
    return None


def _less_resident(a: Placement, b: Placement) -> bool:
    """Whether A is less favourable to residency than B."""
    if bool(a.fallback) != bool(b.fallback):
        return bool(a.fallback)
    return (a.operation_share if a.operation_share is not None else 1.0) < (
        b.operation_share if b.operation_share is not None else 1.0
    )


def read_placement(pid: str, pol: Policy | None, files: tuple[Evidence, ...]) -> Placement:
    """What policy PID's placement FILES show: the deciding file's shares, and where another
    file disagrees (module docstring)."""
    declared = pol.placement_file if pol else None
    usable = [f for f in files if f.usable]
    pick = next((f for f in usable if f.path == declared), None) or (
        min(usable, key=lambda f: f.rank) if usable else None
    )
    names = tuple(f.path for f in files)
    if pick is None:
        return Placement(pid, names, None, None, None, problem="no placement file could be read")
    read = {f.path: (_one(pid, pol, names, f), f) for f in usable}
    chosen, chosen_ev = read[pick.path]
    disagreements: list[Disagreement] = []
    for path, (other, ev) in read.items():
        if path == pick.path or other.problem:
            continue
        why = _disagree(chosen, chosen_ev, other, ev, pol)
        if why is None:
            continue
        source = _text(chosen_ev.meta, "profile_file")
        raw_is_other = path == source or (
            source is None
            and _text(ev.meta, "profile_file") != chosen.used
            and _less_resident(other, chosen)
        )
        if raw_is_other:
            disagreements.append(Disagreement(chosen.used or "", path, why))
            chosen, chosen_ev = other, ev
        else:
            disagreements.append(Disagreement(path, chosen.used or "", why))
    return replace(chosen, disagreements=tuple(disagreements))
