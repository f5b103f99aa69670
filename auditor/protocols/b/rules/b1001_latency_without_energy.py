"""B1001: no policy reports latency without energy.

What it checks: every policy with latency (ok trials; the diagnostic baseline included, a
candidate rejected at a gate excepted: its energy is not wanted, B8) has a pooled energy
figure the auditor recomputes from its traces, and policies.csv reports it (average power
and joules per inference). Energy not measured (no instrument, below resolution, a trace
that does not cover the window), with its reason, is not an error: the verdict is
`incomplete`. Energy claimed where the traces cannot support it is B0304's and B0601-B0603's
error, not this.
Reads: the pooled energy (facts/policies.py); policies.csv `p95_latency_ms`, `median_wall_seconds`,
`average_power_w`, `joules_per_inference`; trials.csv `status`.
Why it matters: B10: "the report is incomplete if it gives latency without placement
evidence and energy" (placement evidence: B0401); a latency table alone cannot decide a
residency-and-energy spot check.
Example: a CPU machine without RAPL: every trial has latency and "energy not measured: no
powercap interface".
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.rules._energy import POLICY_CLAIMS, TRIAL_CLAIMS, claimed
from auditor.protocols.b.rules._where import at_policy
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B1001",
    title="latency without energy",
    protocol_ref="B10",
    severity="error",
    requires=("manifest", "trials"),
    fix="Measure energy over every trial's window (RAPL, NVML, powermetrics, HWiNFO) on a "
    "machine that exposes it, over a window above the declared resolution.",
)
def check(view: RunView) -> Iterator[Finding]:
    for f in policy_facts(view).values():
        if not f.ok or f.gate_passed is False:
            continue
        if f.energy_missing is not None and (
            claimed(f.claims, POLICY_CLAIMS) or any(claimed(t.claims, TRIAL_CLAIMS) for t in f.ok)
        ):
            continue  # energy claimed that the traces cannot support: B0304, B0601-B0603
        reported = all(
            f.claims.get(c) is not None for c in ("average_power_w", "joules_per_inference")
        )
        if f.energy_missing is None and (reported or not f.claims):
            continue
        why = f.energy_missing or "policies.csv leaves its energy cells empty"
        bad = next((t for t in f.ok if t.energy is None or not t.energy.measured), None)
        status = (
            bad.energy.status
            if bad is not None and bad.energy is not None
            else "no trace"
            if bad is not None
            else "empty energy cells"
        )
        yield RULE.finding(
            f"policy {f.policy.policy_id} reports latency (p95 "
            f"{f.p95_ms if f.p95_ms is None else round(f.p95_ms, 4)} ms) "
            f"without energy: {why}",
            **at_policy(f),
            observed=status,
            expected="average power and joules per inference",
            missing_evidence=True,
        )


RULE = check
