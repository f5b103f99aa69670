"""The placement section of protocol B's report: per policy with placement evidence, its
files, the one used, its tool, shares against the floor and compute operators."""

from __future__ import annotations

from typing import Any

from auditor.present import NOT_RECORDED
from auditor.protocols.b.facts.declared import policies
from auditor.protocols.b.facts.placement import placements
from auditor.protocols.b.view import RunView


def placement_section(view: RunView) -> list[dict[str, Any]]:
    """Per policy with placement evidence: the file, its tool, shares and compute operators."""
    out = []
    pols = policies(view)
    for pid, p in placements(view).items():
        pol = pols.get(pid)
        out.append(
            {
                "policy_id": pid,
                "role": pol.role if pol else None,
                "accelerator": (
                    "on " + "/".join(sorted(pol.accelerator))
                    if pol and pol.accelerator
                    else "CPU-only"
                ),
                "files": list(p.files),
                "used": p.used,
                "tool": p.tool or NOT_RECORDED,
                "nodes": p.nodes,
                "placed": p.placed,
                "by_device": dict(sorted(p.by_device.items())),
                "operation_share": p.operation_share,
                "cost_share": p.cost_share,
                "cpu_node_share": p.cpu_node_share,
                "floor": pol.floor if pol else None,
                "compute_ops": [
                    {"op_type": op, "devices": ", ".join(f"{d} {n}" for d, n in sorted(by.items()))}
                    for op, by in sorted(p.compute_ops.items())
                ],
                "fallback": p.fallback,
                "problem": p.problem,
                "assigned": [
                    f"{a.get('execution_provider')} ({a.get('device_type')})" for a in p.assigned
                ],
            }
        )
    return out
