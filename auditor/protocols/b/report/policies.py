"""The policy comparison table of protocol B's report: every policy with every figure and
where it comes from (energy instrument and window, shares against the floor, gates, the
comparison with the CPU-only baseline)."""

from __future__ import annotations

from typing import Any

from auditor.present import NOT_RECORDED
from auditor.protocols.b.facts.comparisons import comparisons
from auditor.protocols.b.facts.placement import placements
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.report.notes import EnergyNotes
from auditor.protocols.b.report.text import fmt, pct
from auditor.protocols.b.summary import PolicyVerdict
from auditor.protocols.b.view import RunView


def comparison_section(
    view: RunView, verdicts: dict[str, PolicyVerdict], notes: EnergyNotes
) -> list[dict[str, Any]]:
    """Every policy with every figure and where it comes from (why its energy was not
    measured: a reference to NOTES)."""
    comps = comparisons(view)
    places = placements(view)
    gates = view.m.get("gates") or {}
    out = []
    for pid, f in policy_facts(view).items():
        p = places.get(pid)
        c = comps.get(pid)
        out.append(
            {
                "policy_id": pid,
                "role": f.policy.role,
                "runtime": f.policy.runtime,
                "compute_units": f.policy.compute_units,
                "precision": f.policy.precision,
                "verdict": verdicts[pid].verdict,
                "why": notes.abbreviate_all(verdicts[pid].detail or verdicts[pid].reason),
                "trials": f"{len(f.ok)} ok of {len(f.trials)}",
                "median_wall": fmt(f.median_wall_s, "s"),
                "p95": fmt(f.p95_ms, "ms") + (f" (n = {f.n_latencies:,})" if f.n_latencies else ""),
                "power": fmt(f.average_power_w, "W"),
                "jpi": fmt(f.joules_per_inference, "J"),
                "energy": (
                    f"{f.energy_source} over {_domains(f.domain_power_w)}; "
                    f"{f.wall_s:.3f} s of windows, {f.inferences:,} inferences"
                    if f.energy_missing is None
                    and f.wall_s is not None
                    and f.inferences is not None
                    else f"not measured ({notes.abbreviate(str(f.energy_missing))})"
                ),
                "share": (
                    "—"
                    if f.policy.role != "accelerator"
                    else f"{pct(p.operation_share) if p else '—'} of operations"
                    + (f", {pct(p.cost_share)} of cost" if p and p.cost_share is not None else "")
                    + f" (floor {pct(f.policy.floor)})"
                ),
                "gates": (
                    f"accuracy {pct(f.accuracy)} (floor {pct(gates.get('accuracy_floor'))})"
                    f", agreement {pct(f.agreement)} "
                    f"(floor {pct(gates.get('agreement_floor'))})"
                    if f.accuracy is not None
                    else "no answer to judge"
                ),
                "versus_baseline": notes.abbreviate_all(c.reason) if c is not None else "—",
            }
        )
    return out


def _domains(power: tuple[tuple[str, float], ...]) -> str:
    """`package:0 14 W + gpu:0 44 W`: each summed domain with its own average power."""
    return " + ".join(f"{name} {fmt(w, 'W', 3)}" for name, w in power) or NOT_RECORDED
