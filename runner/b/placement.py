"""Placement evidence (B4, B5) from one short diagnostic pass per policy, outside the timed
trials, in the process that runs the trials.

torch (`placement/<policy_id>.torch.json`, schemas/torch-placement.schema.json): the device
of every parameter and buffer (and, for quantized modules, of the packed weights in the
state dict); `torch.profiler` events of the pass counted by (name, device type), kernels
being the events on a device other than the CPU (under CUDA, `aten::*` events are CPU-side
launches); and the aten operators the pass dispatched, counted by the device of their output
tensors (a `TorchDispatchMode`). The operation share is the fraction of dispatched operators
whose outputs all lie on the policy's accelerator.

ONNX Runtime (`placement/<policy_id>.ort.json`, schemas/ort-placement.schema.json): the
providers asked for and active, which provider each node was assigned to
(`get_provider_graph_assignment_info`, else the profile), and the raw profile of the pass
(`placement/<policy_id>.ort-profile.json`). Summaries: the CPU-node share and where the
compute operations (embedding gathers, Gemm/MatMul, reductions, the EmbeddingBag loop) ran.
The operation share is the fraction of nodes with a known provider on the provider asked for.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from runner.b.energy.base import now_utc
from runner.b.policies import CPU_PROVIDER, OrtPolicy, TorchPolicy, ort_session

COMPUTE_OPS = frozenset(
    {
        "Gather",
        "GatherElements",
        "GatherND",
        "Gemm",
        "MatMul",
        "MatMulInteger",
        "Conv",
        "ReduceSum",
        "ReduceMean",
        "ReduceMax",
        "Loop",
        "Attention",
        "Softmax",
        "Einsum",
        "EmbedLayerNormalization",
    }
)


class _DeviceCounter(TorchDispatchMode):
    """Counts every dispatched aten operator by the devices of its output tensors."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[tuple[str, str]] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        flat, _ = tree_flatten(out)
        devices = sorted({str(t.device) for t in flat if isinstance(t, torch.Tensor)})
        self.counts[(str(func.name()), ",".join(devices) or "none")] += 1
        return out


@contextlib.contextmanager
def _native_stderr_silenced() -> Iterator[None]:
    """The profiler's native library prints start/stop lines on file descriptor 2, which
    would break the progress display; send them to a scratch file for the pass."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as scratch:
        os.dup2(scratch.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _device_type(value: Any) -> str:
    name = str(value).rsplit(".", 1)[-1].lower()
    return name if name in ("cpu", "cuda", "mps", "xpu") else "other"


def torch_placement(policy: TorchPolicy, texts: list[str]) -> dict[str, Any]:
    """The torch placement record of `policy` over the diagnostic prompts `texts`."""
    form = policy.workload.tensor_form()
    tensors: list[dict[str, Any]] = []
    if form is not None and form.module is not None:
        module = form.module
        seen: set[int] = set()
        for name, p in module.named_parameters():
            seen.add(id(p))
            tensors.append(
                {"name": name, "kind": "parameter", "device": str(p.device), "numel": p.numel()}
            )
        for name, b in module.named_buffers():
            seen.add(id(b))
            tensors.append(
                {"name": name, "kind": "buffer", "device": str(b.device), "numel": b.numel()}
            )
        # quantized modules keep their weights packed in the state dict, not as parameters
        for name, t in module.state_dict().items():
            if (
                isinstance(t, torch.Tensor)
                and id(t) not in seen
                and not any(x["name"] == name for x in tensors)
            ):
                tensors.append(
                    {"name": name, "kind": "buffer", "device": str(t.device), "numel": t.numel()}
                )
    else:
        for i, t in enumerate(policy.workload.parameters()):
            tensors.append(
                {
                    "name": f"tensor[{i}]",
                    "kind": "parameter",
                    "device": str(t.device),
                    "numel": t.numel(),
                }
            )
    started = now_utc()
    activities = [torch.profiler.ProfilerActivity.CPU]
    if policy.device.startswith("cuda"):
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with _native_stderr_silenced(), torch.profiler.profile(activities=activities) as prof:
        for text in texts:
            policy.classify_one(text)
        policy.synchronize()
    ops: dict[tuple[str, str], dict[str, Any]] = {}
    for evt in prof.events():
        dtype = _device_type(evt.device_type)
        entry = ops.setdefault(
            (evt.name, dtype),
            {
                "name": evt.name,
                "device_type": dtype,
                "count": 0,
                "self_time_us": 0.0,
                "is_kernel": dtype != "cpu",
            },
        )
        entry["count"] += 1
        took = (
            evt.self_cpu_time_total if dtype == "cpu" else evt.time_range.end - evt.time_range.start
        )
        entry["self_time_us"] += max(0.0, float(took))
    counter = _DeviceCounter()
    with counter:
        for text in texts:
            policy.classify_one(text)
    policy.synchronize()
    dispatched = [
        {"name": n, "devices": d, "count": c} for (n, d), c in sorted(counter.counts.items())
    ]
    target = torch.device(policy.device).type
    with_output = [(d, c) for (_, d), c in counter.counts.items() if d != "none"]
    on_target = sum(
        c for d, c in with_output if all(torch.device(x).type == target for x in d.split(","))
    )
    total = sum(c for _, c in with_output)
    kernels: Counter[str] = Counter()
    for op in ops.values():
        if op["is_kernel"]:
            kernels[op["device_type"]] += op["count"]
    return {
        "format": "torch-placement/1",
        "policy_id": policy.spec.policy_id,
        "requested_device": policy.device,
        "torch_version": torch.__version__,
        "parameters": dict(Counter(t["device"] for t in tensors if t["kind"] == "parameter")),
        "buffers": dict(Counter(t["device"] for t in tensors if t["kind"] == "buffer")),
        "tensors": tensors,
        "ops": sorted(ops.values(), key=lambda o: (o["device_type"], o["name"])),
        "dispatched_ops": dispatched,
        "diagnostic": {"prompts": len(texts), "started_at": started, "ended_at": now_utc()},
        "summary": {
            "operation_share": on_target / total if total else None,
            "operation_share_rule": "dispatched aten operators whose output tensors all lie "
            f"on the policy's device type ({target}) / dispatched "
            "operators with a tensor output",
            "operators_on_device": on_target,
            "operators_with_output": total,
            "kernels_by_device": dict(kernels),
            "tensor_devices": sorted({t["device"] for t in tensors}),
        },
    }


def ort_placement(
    policy: OrtPolicy,
    texts: list[str],
    onnx_file: Path,
    threads: int,
    model_sha256: str,
    profile_dest: Path,
    profile_rel: str,
) -> dict[str, Any]:
    """The ORT placement record of `policy`; the raw profile of the diagnostic pass is
    copied to `profile_dest`."""
    import onnxruntime as ort

    nodes: list[dict[str, Any]] = []
    source = "none"
    try:
        for sub in policy.session.get_provider_graph_assignment_info():
            for node in sub.get_nodes():
                nodes.append({"name": node.name, "op_type": node.op_type, "provider": sub.ep_name})
        source = "graph_assignment_info"
    except Exception:  # an ORT without the API, or the entry not honoured: use the profile
        nodes = []
    started = now_utc()
    with tempfile.TemporaryDirectory(prefix="ort-profile-") as tmp:
        session = ort_session(policy.spec, onnx_file, threads, profile_prefix=Path(tmp) / "profile")
        profiled = OrtPolicy(policy.spec, session, policy.form)
        for text in texts:
            profiled.classify_one(text)
        # the profile's `ts` count microseconds from this wall-clock instant (ns since epoch)
        profile_start_ns = int(session.get_profiling_start_time_ns())
        raw = Path(session.end_profiling())
        profile_dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(raw, profile_dest)
    events = json.loads(profile_dest.read_text(encoding="utf-8"))
    profile_nodes = _profile_nodes(events)
    if source == "none" and profile_nodes:
        nodes, source = (
            [{k: n[k] for k in ("name", "op_type", "provider")} for n in profile_nodes],
            "profile",
        )
    return {
        "format": "ort-placement/1",
        "policy_id": policy.spec.policy_id,
        "ort_version": ort.__version__,
        "model_sha256": model_sha256,
        "requested_providers": policy.requested,
        "active_providers": policy.active,
        "source": source,
        "nodes": nodes,
        "profile_file": profile_rel,
        "session_options": _threads_of(policy.session),
        "diagnostic": {
            "prompts": len(texts),
            "started_at": started,
            "ended_at": now_utc(),
            "profile_active_providers": profiled.active,
            "profiling_start_time_ns": profile_start_ns,
        },
        "summary": {
            **_node_summary(nodes, policy.spec.compute_units),
            "profile": _node_summary(profile_nodes, policy.spec.compute_units),
            "operation_share_rule": "nodes whose provider is the one asked for / "
            "nodes with a known provider (source: the "
            "graph assignment, else the profile)",
        },
    }


def _threads_of(session: Any) -> dict[str, int | None]:
    """The intra- and inter-op threads of the session that runs the trials, as ORT reports
    them (the manifest's threads.onnxruntime_intra_op, observed)."""
    try:
        opts = session.get_session_options()
        return {
            "intra_op_num_threads": int(opts.intra_op_num_threads),
            "inter_op_num_threads": int(opts.inter_op_num_threads),
        }
    except Exception:  # a session without the call: not recorded, never a guess
        return {"intra_op_num_threads": None, "inter_op_num_threads": None}


def _profile_nodes(events: Any) -> list[dict[str, Any]]:
    """One entry per distinct node of the profile (its `Node` events, `<name>_kernel_time`),
    with the time it took over the pass; a node without a provider is unknown, never CPU."""
    found: dict[tuple[str, str, str | None], dict[str, Any]] = {}
    for e in events if isinstance(events, list) else []:
        if not isinstance(e, dict) or e.get("cat") != "Node":
            continue
        name = str(e.get("name", ""))
        if not name.endswith("_kernel_time"):
            continue
        args = e.get("args") or {}
        key = (
            name.removesuffix("_kernel_time"),
            str(args.get("op_name", "")),
            args.get("provider"),
        )
        entry = found.setdefault(
            key, {"name": key[0], "op_type": key[1], "provider": key[2], "runs": 0, "dur_us": 0}
        )
        entry["runs"] += 1
        entry["dur_us"] += int(e.get("dur", 0) or 0)
    return list(found.values())


def _node_summary(nodes: list[dict[str, Any]], requested: str) -> dict[str, Any]:
    known = [n for n in nodes if n["provider"]]
    by_provider = Counter(n["provider"] or "unknown" for n in nodes)
    compute: Counter[tuple[str, str]] = Counter(
        (n["op_type"], n["provider"] or "unknown") for n in nodes if n["op_type"] in COMPUTE_OPS
    )
    on_requested = sum(1 for n in known if n["provider"] == requested)
    compute_known = [n for n in nodes if n["op_type"] in COMPUTE_OPS and n["provider"]]
    time_total = sum(n.get("dur_us", 0) for n in known)
    out: dict[str, Any] = {
        "nodes": len(nodes),
        "nodes_with_provider": len(known),
        "by_provider": dict(by_provider),
        "cpu_node_share": (
            sum(1 for n in known if n["provider"] == CPU_PROVIDER) / len(known) if known else None
        ),
        "operation_share": on_requested / len(known) if known else None,
        "compute_ops": [
            {"op_type": op, "provider": prov, "count": c}
            for (op, prov), c in sorted(compute.items())
        ],
        "compute_op_share": (
            sum(1 for n in compute_known if n["provider"] == requested) / len(compute_known)
            if compute_known
            else None
        ),
    }
    if time_total:
        out["time_share_on_requested"] = (
            sum(n.get("dur_us", 0) for n in known if n["provider"] == requested) / time_total
        )
    return out
