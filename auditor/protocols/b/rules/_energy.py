"""Energy claims the trace cannot support, by the reason it cannot (shared by B0304 and the
B6 rules, so each reason is reported by exactly one rule): a trial's row claims an energy
figure from a window whose trace shows STATUS, and a policy's pooled figures are claimed
while its first ok trial without a measured energy shows STATUS."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from auditor.protocols.b.facts.policies import PolicyFacts, policy_facts
from auditor.protocols.b.facts.trials import Trial, trials
from auditor.protocols.b.view import RunView

TRIAL_CLAIMS = ("energy_j", "average_power_w", "joules_per_inference")
POLICY_CLAIMS = ("average_power_w", "joules_per_inference")
NO_MEASUREMENT = frozenset(
    {"no_trace", "fault", "disordered", "unavailable", "no_window", "no_domain"}
)


def claimed(row: Mapping[str, Any], columns: tuple[str, ...]) -> list[str]:
    return [c for c in columns if row.get(c) is not None]


def unsupported_trials(
    view: RunView, statuses: frozenset[str]
) -> Iterator[tuple[Trial, list[str]]]:
    """Ok trials whose row claims energy and whose window's energy shows one of STATUSES."""
    for t in trials(view):
        cols = claimed(t.claims, TRIAL_CLAIMS)
        if t.status == "ok" and cols and t.energy is not None and t.energy.status in statuses:
            yield t, cols


def unsupported_policies(
    view: RunView, statuses: frozenset[str]
) -> Iterator[tuple[PolicyFacts, list[str], Trial | None]]:
    """Policies claiming pooled energy without it, the first ok trial at fault showing one of
    STATUSES (no ok trial, or trials summing other domains: `NO_MEASUREMENT`'s rule)."""
    for f in policy_facts(view).values():
        cols = claimed(f.claims, POLICY_CLAIMS)
        if not cols or f.energy_missing is None:
            continue
        bad = next((t for t in f.ok if t.energy is None or not t.energy.measured), None)
        status = bad.energy.status if bad is not None and bad.energy is not None else None
        if (status in statuses) or (status is None and statuses is NO_MEASUREMENT):
            yield f, cols, bad
