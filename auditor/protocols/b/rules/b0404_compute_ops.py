"""B0404: an accelerator policy's compute operations ran on its accelerator.

What it checks: in per-node placement evidence (an ONNX Runtime profile or graph assignment,
a Core ML compute plan, a Windows ML node list), every compute operation (embedding
gathers, Gemm/MatMul and convolutions, reductions, attention, softmax: `COMPUTE_OPS`) of an
accelerator policy ran on the accelerator; the CPU-node share and where each compute
operator ran are in the report. A compute operation on the CPU is an error for a deep-tier
model and a warning for a lite one.
Reads: placement/* (`op_type` and device of every node); manifest `/model_tier`.
Why it matters: B5 asks which provider ran each node; ONNX Runtime keeps shape operations on
the CPU on purpose, so "zero CPU nodes" is the wrong test, and a share above the floor can
still leave the MatMuls, where the time and energy go, on the CPU.
Example: `ort-cuda`: 30 of 41 nodes on CUDAExecutionProvider (73 %), but Gemm and Gather on
CPUExecutionProvider.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding, Subject
from auditor.protocols.b.facts.declared import model_tier, policies
from auditor.protocols.b.facts.placement import placements
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(code="B0404", title="compute operations on the accelerator", protocol_ref="B4",
      severity="error", requires=("manifest",),
      fix="Make the accelerator's provider take the compute operators (a supported opset, "
          "static shapes, the right data types), or declare the policy CPU-only.")
def check(view: RunView) -> Iterator[Finding]:
    deep = model_tier(view) == "deep"
    places = placements(view)
    for pol in policies(view).values():
        p = places.get(pol.policy_id)
        if pol.role != "accelerator" or p is None or p.problem or p.fallback:
            continue  # no evidence (B0401) or a fallback (B0402): said there
        on_cpu = {op: by["cpu"] for op, by in sorted(p.compute_ops.items()) if by.get("cpu")}
        if on_cpu:
            which = ", ".join(f"{op} x{n}" for op, n in on_cpu.items())
            yield RULE.finding(f"accelerator policy {pol.policy_id}: compute operations ran on "
                               f"the CPU ({which}); CPU-node share "
                               f"{(p.cpu_node_share or 0):.1%}", artifact=p.used,
                               observed=on_cpu,
                               expected="compute operations on "
                                        + "/".join(sorted(pol.accelerator)),
                               severity="error" if deep else "warning",
                               subject=Subject(policy=pol.policy_id))


RULE = check
