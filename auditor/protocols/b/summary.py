"""The summary of a protocol B run, a fact of the protocol: per declared policy its verdict
from the audit, why, and its recomputed figures. Page 1 of the report, the archive index and
`audit compare` all read this one summary.

A policy's verdict: `baseline` for the declared CPU-only baseline (what the others are
compared with, never accepted or rejected itself), `rejected` when an error finding is about
it (its `subject`), `incomplete` when such a finding says evidence of it is missing,
`accepted` only when nothing is wrong with it and the run as a whole is accepted; a policy
with nothing against it in a run that is not accepted takes the run's verdict, with that
reason. The reason in a few words names the deciding finding's rule; in full (`detail`), its
message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from auditor.model import (
    AuditResult,
    ConfigSummary,
    ConfigVerdict,
    Finding,
    RunSummary,
)
from auditor.protocols.b.facts.declared import policies, repetitions
from auditor.protocols.b.facts.identity import context, run_identity
from auditor.protocols.b.facts.placement import placements
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.facts.sequence import sequence
from auditor.protocols.b.figures import PolicyFigures
from auditor.protocols.summary import main_reason, summary_of

if TYPE_CHECKING:
    from auditor.protocols.b.view import RunView


@dataclass(frozen=True)
class PolicyVerdict:
    """A policy's verdict and why."""

    verdict: ConfigVerdict
    reason: str | None
    """In a few words: the deciding finding's code and title (None when accepted)."""
    detail: str | None
    """In full: the deciding finding's code and message."""
    finding: Finding | None = None


def _policy_of(f: Finding) -> str | None:
    return f.subject.config if f.subject is not None else None


def policy_verdicts(view: RunView, result: AuditResult) -> dict[str, PolicyVerdict]:
    """Per declared policy, its verdict from RESULT's findings (the module's rules)."""
    out: dict[str, PolicyVerdict] = {}
    for pid, pol in policies(view).items():
        own = [f for f in result.findings if _policy_of(f) == pid and f.severity == "error"]
        first = next((f for f in own if not f.missing_evidence), None) or next(iter(own), None)
        short = f"{first.code} {first.title}" if first else None
        full = f"{first.code}: {first.message}" if first else None
        if pol.is_baseline:
            out[pid] = PolicyVerdict(
                "baseline",
                "the CPU-only baseline (B7)" + (f"; {short}" if short else ""),
                full,
                first,
            )
        elif first is not None:
            out[pid] = PolicyVerdict(
                "incomplete" if first.missing_evidence else "rejected", short, full, first
            )
        elif result.verdict != "accepted":
            why = main_reason(result)
            out[pid] = PolicyVerdict(
                result.verdict,
                f"nothing against it, but the run is {result.verdict}",
                f"the run is {result.verdict}: {why}" if why else None,
            )
        else:
            out[pid] = PolicyVerdict("accepted", None, None)
    return out


def summarize(view: RunView, result: AuditResult) -> RunSummary:
    """The summary of one protocol B run: per policy its verdict (`accepted` only for an
    accepted policy; the baseline's is `baseline`), the median wall time and its range over
    the ok trials, inferences per second at the median, and its `PolicyFigures` (p95,
    average power, joules per inference with the energy source, the operation share and
    floor, accuracy and agreement)."""
    facts = policy_facts(view)
    places = placements(view)
    verdicts = policy_verdicts(view, result)
    per_trial = sequence(view).n * repetitions(view)
    configs = []
    for pid, f in facts.items():
        v = verdicts[pid]
        walls = [t.wall_s for t in f.ok if t.wall_s is not None]
        p = places.get(pid)
        configs.append(
            ConfigSummary(
                config_id=pid,
                verdict=v.verdict,
                gpu_model=None,
                gpu_count=0,
                precision=f.policy.precision,
                median_s=f.median_wall_s,
                min_s=min(walls) if walls else None,
                max_s=max(walls) if walls else None,
                throughput_per_s=(
                    per_trial / f.median_wall_s if f.median_wall_s and per_trial else None
                ),
                reason=v.reason,
                detail=v.detail,
                context=context(view),
                figures=PolicyFigures(
                    role=f.policy.role,
                    runtime=f.policy.runtime,
                    compute_units=f.policy.compute_units,
                    trials_ok=len(f.ok),
                    trials=len(f.trials),
                    p95_ms=f.p95_ms,
                    latencies=f.n_latencies,
                    avg_power_w=f.average_power_w,
                    joules_per_inference=f.joules_per_inference,
                    energy_source=f.energy_source,
                    energy_window_s=f.wall_s,
                    energy_domains=", ".join(f.domains) or None,
                    energy_missing=f.energy_missing,
                    operation_share=p.operation_share if p else None,
                    cost_share=p.cost_share if p else None,
                    operation_share_floor=f.policy.floor,
                    accuracy=f.accuracy,
                    agreement=f.agreement,
                    domain_power_w=f.domain_power_w,
                ),
            )
        )
    return summary_of(view, result, configs, run_identity(view))
