"""B0304: energy figures are what the raw power trace gives over each window.

What it checks: per ok trial whose row claims energy, the trace measures the window
(`trial_energy`) and `energy_j`, `average_power_w`, `joules_per_inference` and
`energy_source` are the recomputed ones at their rounding; per policy, policies.csv
`average_power_w` and `joules_per_inference` are the pooled figures of its ok trials (sum of
energy over sum of wall times, or of answers). A figure claimed with no trace, an unreadable
one, one whose time goes back, one whose instruments gave nothing, no known window, or no
domain the auditor sums, is unsupported; a trace that does not cover the window, has a gap
or is below resolution is B0601-B0603's.
Reads: trials.csv `energy_j`, `average_power_w`, `joules_per_inference`, `energy_source`,
`status`; policies.csv `average_power_w`, `joules_per_inference`; power/<policy_id>/trial-<n>.*
(readings over the window); outputs (answer counts).
Why it matters: B3 reports average package power and joules per inference; B7 accepts or
rejects an accelerator on them. A figure that is not the trace's (an estimate from a TDP, a
value copied between trials) decides a purchase on nothing.
Example: trials.csv row 4 claims 12.5 W; NVML and RAPL counters over its window give 61.8 W.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.claims import agrees
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.rules._energy import (
    NO_MEASUREMENT,
    unsupported_policies,
    unsupported_trials,
)
from auditor.protocols.b.rules._where import at_policy, at_trial, claim, fmt
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0304",
    title="energy recomputed from the trace",
    protocol_ref="B3",
    severity="error",
    requires=("trials", "power"),
    fix="Compute energy from the raw trace over each trial's window only (counters, or "
    "watts x time), and pool a policy's trials as sums.",
)
def check(view: RunView) -> Iterator[Finding]:
    for t, cols in unsupported_trials(view, NO_MEASUREMENT):
        assert t.energy is not None
        yield RULE.finding(
            f"{t.name}: {', '.join(cols)} claimed, but no energy can be "
            f"computed for its window ({t.energy.status}: {t.energy.reason})",
            **at_trial(t),
            observed=cols,
            expected="empty energy cells",
            evidence={"trace": t.energy.trace},
        )
    for t in trials(view):
        e = t.energy
        if t.status != "ok" or e is None or not e.measured:
            continue
        for col, value in (
            ("energy_j", e.energy_j),
            ("average_power_w", e.average_power_w),
            ("joules_per_inference", e.joules_per_inference),
        ):
            said, text = claim(t.claims, t.texts, col)
            if said is not None and not agrees(said, text, value):
                yield RULE.finding(
                    f"{t.name}: {col} {text}, the trace gives {fmt(value)} "
                    f"({e.source} over {', '.join(e.domains)})",
                    **at_trial(t),
                    observed=said,
                    expected=value,
                    evidence={"field": col, "trace": e.trace},
                )
        src = t.claims.get("energy_source")
        if src and (src or "").casefold() != (e.source or "").casefold():
            yield RULE.finding(
                f"{t.name}: energy_source {src!r}, the trace is {e.source!r}",
                **at_trial(t),
                observed=src,
                expected=e.source,
                evidence={"field": "energy_source", "trace": e.trace},
            )
    for f, cols, _bad in unsupported_policies(view, NO_MEASUREMENT):
        yield RULE.finding(
            f"policy {f.policy.policy_id}: {', '.join(cols)} claimed, but {f.energy_missing}",
            **at_policy(f),
            observed=cols,
            expected="empty energy cells",
        )
    for f in policy_facts(view).values():
        if f.energy_missing is not None:
            continue
        for col, value in (
            ("average_power_w", f.average_power_w),
            ("joules_per_inference", f.joules_per_inference),
        ):
            said, text = claim(f.claims, f.texts, col)
            if said is not None and not agrees(said, text, value):
                yield RULE.finding(
                    f"policy {f.policy.policy_id}: {col} {text}, its ok trials "
                    f"pool to {fmt(value)}",
                    **at_policy(f),
                    observed=said,
                    expected=value,
                    evidence={"field": col},
                )


RULE = check
