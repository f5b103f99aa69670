"""B0402: an accelerator policy ran on its accelerator, at or above its declared floor.

What it checks: for each accelerator policy, the manifest records no fallback of its own
(a policy fault, a first active provider other than the one asked for, the CPU as its
device) for a policy that was measured (one never measured is B0301's); with placement
evidence (the raw file where a record disagrees with it, B0405),
the runtime did not fall back (ONNX Runtime's active provider is the one asked for; Windows
ML compiled for and assigned the device), the session holds first the execution provider the
policy declares (where it declares one), a floor is declared (the policy's
`operation_share_floor`, else the run's `placement.operation_share_floor`), the operation
share recomputed from the placement frame (operations on the accelerator / operations with
placement information) is at or above it, and the report that share comes from is whole (a
report cut short covers only part of the operations: it cannot show the floor is met). A
fallback, a share below the floor or a share over part of the report is a residency failure
whatever the latency; the finding quotes the p95 to say so.
Reads: placement/* (nodes, devices, providers, the session's providers; the reader's
fallback and `truncated` notes); manifest `/placement/operation_share_floor`,
`/policies/*/operation_share_floor`, `/compute_units`, `/status`, `/active_providers`,
`/requested_providers`, `/device`; outputs latencies (the p95 quoted).
Why it matters: B4: "a fast CPU fallback is still a residency failure": a model that silently
ran on the CPU is fast on a small input and drains the battery in the app.
Example: `ort-cuda` requested CUDAExecutionProvider; the ORT profile puts every node on
CPUExecutionProvider: 0 % on the GPU, floor 50 %.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST
from auditor.protocols.b.facts.declared import model_tier
from auditor.protocols.b.facts.placement import placements, residency
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0402",
    title="accelerator residency",
    protocol_ref="B4",
    severity="error",
    requires=("manifest",),
    fix="Fix the export or the runtime settings until the accelerator takes the model "
    "(operation share at or above the floor), or declare the policy CPU-only.",
)
def check(view: RunView) -> Iterator[Finding]:
    facts = policy_facts(view)
    places = placements(view)
    for pid, f in facts.items():
        why = residency(view, pid)
        if why is None or (why == f.policy.recorded_fallback and not f.ok):
            continue  # a fault the runner recorded and never measured: B0301 says so
        p = places.get(pid)
        fast = (
            f" (p95 {f.p95_ms:.3g} ms: a residency failure however fast)"
            if f.p95_ms is not None
            else ""
        )
        tier = model_tier(view)
        # the manifest's own record of a fallback is cited there, the rest in the evidence
        where: dict[str, Any] = (
            {"artifact": p.used}
            if p is not None and p.used and why != f.policy.recorded_fallback
            else {"artifact": MANIFEST, "pointer": "/policies"}
        )
        yield RULE.finding(
            f"accelerator policy {pid} did not run on its accelerator: {why}"
            f"{fast}" + (" for a deep-tier model" if tier == "deep" else ""),
            **where,
            observed=p.operation_share if p else None,
            expected=f.policy.floor,
            subject=policy_subject(pid),
            evidence={
                "fallback": p.fallback if p else None,
                "recorded_fallback": f.policy.recorded_fallback,
            },
        )


RULE = check
