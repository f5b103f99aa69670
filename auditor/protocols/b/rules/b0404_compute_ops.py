"""B0404: an accelerator policy's compute operations ran on its accelerator.

What it checks: in per-node placement evidence (an ONNX Runtime profile or graph assignment,
a Core ML compute plan, a Windows ML node list), every compute operation (embedding
gathers, Gemm/MatMul and convolutions, reductions, attention, softmax: `COMPUTE_OPS`) of an
accelerator policy ran on the accelerator, and in a record of the model's tensors (our
runner's torch record) every parameter and buffer lies there; the CPU-node share and where
each compute operator ran are in the report. A compute operation or a tensor off the
accelerator is an error for a deep-tier model and a warning for a lite one. On Linux
(environment.json `os.platform`) a deep-tier model needs a GPU execution provider or torch
CUDA for every compute node (the decision of docs/protocol.md): there the accelerator is the
GPU, and bare CPU is a residency failure, as on Windows.
Reads: placement/* (`op_type` and device of every node or tensor); manifest `/model_tier`;
environment.json `/os/platform`.
Why it matters: B5 asks which provider ran each node and where every parameter lies; ONNX
Runtime keeps shape operations on the CPU on purpose, so "zero CPU nodes" is the wrong test,
and a share above the floor can still leave the MatMuls, where the time and energy go, on
the CPU.
Example: `ort-cuda`: 30 of 41 nodes on CUDAExecutionProvider (73 %), but Gemm and Gather on
CPUExecutionProvider.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.declared import model_tier, policies
from auditor.protocols.b.facts.placement import placements
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


def _linux(view: RunView) -> bool:
    os_ = (view.environment or {}).get("os")
    return isinstance(os_, dict) and str(os_.get("platform") or "").lower() == "linux"


@rule(
    code="B0404",
    title="compute operations on the accelerator",
    protocol_ref="B4",
    severity="error",
    requires=("manifest",),
    fix="Make the accelerator's provider take the compute operators (a supported opset, "
    "static shapes, the right data types) and the model's tensors, or declare the "
    "policy CPU-only.",
)
def check(view: RunView) -> Iterator[Finding]:
    deep = model_tier(view) == "deep"
    gpu_only = deep and _linux(view)
    places = placements(view)
    for pol in policies(view).values():
        p = places.get(pol.policy_id)
        if pol.role != "accelerator" or p is None or p.problem or p.fallback:
            continue  # no evidence (B0401) or a fallback (B0402): said there
        want = frozenset({"gpu"}) if gpu_only else pol.accelerator
        off = {
            op: sum(n for d, n in by.items() if d not in want and d != "unknown")
            for op, by in sorted(p.compute_ops.items())
        }
        off = {op: n for op, n in off.items() if n}
        tensors = sum(n for d, n in p.tensors.items() if d not in want and d != "unknown")
        if tensors:
            off["tensors (parameters and buffers)"] = tensors
        if not off:
            continue
        which = ", ".join(f"{op} x{n}" for op, n in off.items())
        where = "/".join(sorted(want)) or "the accelerator"
        linux = (
            " (on Linux a deep-tier model needs a GPU execution provider or torch CUDA "
            "for every compute node)"
            if gpu_only
            else ""
        )
        yield RULE.finding(
            f"accelerator policy {pol.policy_id}: compute operations ran off "
            f"{where} ({which}); CPU-node share "
            f"{(p.cpu_node_share or 0):.1%}{linux}",
            artifact=p.used,
            observed=off,
            expected=f"compute operations on {where}",
            severity="error" if deep else "warning",
            subject=policy_subject(pol.policy_id),
        )


RULE = check
