"""Each accelerator policy of a protocol B run against its CPU-only baseline (B7): both
pooled figures lower, on the same power source and the same power mode (the protocol's
decision on B7: a difference is an error), from the same domains, and those domains holding
the CPU and the accelerator the policy runs on (what each summed reading `includes`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from auditor.protocols.b.facts.policies import PolicyFacts, policy_facts
from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.b.view import RunView

DEVICES = frozenset({"cpu", "gpu", "ane", "npu"})


@dataclass(frozen=True)
class Comparison:
    """An accelerator policy against the CPU-only baseline (B7)."""

    policy_id: str
    baseline: str
    status: str
    """`lower` (both figures lower), `not_lower`, `incomplete` (a figure or a domain
    missing), `invalid` (different power sources or power modes)."""
    reason: str
    power_w: float | None = None
    baseline_power_w: float | None = None
    jpi: float | None = None
    baseline_jpi: float | None = None


def _recorded(f: PolicyFacts, column: str) -> set[str]:
    """What F's ok trials record in trials.csv COLUMN (`power_source`, `power_mode`)."""
    return {str(t.claims.get(column)) for t in f.ok if t.claims.get(column)}


def _compare(f: PolicyFacts, base: PolicyFacts) -> tuple[str, str]:
    """(status, reason) of F against BASE."""
    pid = f.policy.policy_id
    for column, what in (("power_source", "power source"), ("power_mode", "power mode")):
        mine, theirs = _recorded(f, column), _recorded(base, column)
        if mine and theirs and mine != theirs:
            return "invalid", (
                f"measured on {'/'.join(sorted(mine))}, the baseline on "
                f"{'/'.join(sorted(theirs))}: not the same {what}"
            )
    if f.energy_missing or base.energy_missing:
        return "incomplete", (
            f"{pid}: {f.energy_missing}"
            if f.energy_missing
            else f"baseline {base.policy.policy_id}: {base.energy_missing}"
        )
    if f.domains != base.domains:
        return "incomplete", (
            f"{pid} sums {', '.join(f.domains)}, the baseline "
            f"{', '.join(base.domains)}: not the same domains"
        )
    lacking = sorted(f.policy.accelerator - f.includes) if f.policy.accelerator <= DEVICES else []
    if lacking or "cpu" not in f.includes:
        return "incomplete", (
            f"the summed domains ({', '.join(f.domains)}) leave out the "
            f"{'/'.join(lacking) or 'CPU'} the policies run on"
        )
    if None in (
        f.average_power_w,
        base.average_power_w,
        f.joules_per_inference,
        base.joules_per_inference,
    ):
        return "incomplete", "a pooled figure is missing (no answer or no wall time to divide by)"
    lower = (
        f.average_power_w < base.average_power_w  # type: ignore[operator]
        and f.joules_per_inference < base.joules_per_inference  # type: ignore[operator]
    )
    return ("lower" if lower else "not_lower"), (
        f"{f.average_power_w:.4g} W and {f.joules_per_inference:.4g} J per inference against "
        f"the baseline's {base.average_power_w:.4g} W and {base.joules_per_inference:.4g} J"
    )


@per_view
def comparisons(view: RunView) -> dict[str, Comparison]:
    """Every accelerator policy with ok trials against the declared baseline."""
    facts = policy_facts(view)
    base = next((f for f in facts.values() if f.policy.is_baseline), None)
    out: dict[str, Comparison] = {}
    for pid, f in facts.items():
        if f.policy.role != "accelerator" or not f.ok:
            continue
        if base is None:
            out[pid] = Comparison(pid, "", "incomplete", "no declared cpu-only baseline")
            continue
        status, reason = _compare(f, base)
        out[pid] = Comparison(
            pid,
            base.policy.policy_id,
            status,
            reason,
            f.average_power_w,
            base.average_power_w,
            f.joules_per_inference,
            base.joules_per_inference,
        )
    return out
