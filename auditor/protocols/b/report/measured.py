"""What protocol B's run measured, as its report says it: the experiment, the machine and
its power source, the prompts, repetitions, minimums, gates and floor."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.present import NOT_RECORDED, json_safe, lookup
from auditor.protocols.b.facts.declared import minimums, repetitions
from auditor.protocols.b.facts.sequence import sequence
from auditor.protocols.b.view import RunView


def measured_section(view: RunView) -> dict[str, Any]:
    m, env = view.m, view.environment or {}
    seq = sequence(view)
    mins = (m.get("energy") or {}).get("minimums") or {}

    def fact(key: str) -> str:
        v = got if isinstance(got := env.get(key), Mapping) else {}
        return str(v.get("value") or f"not available: {v.get('not_available') or '—'}")

    os_ = env.get("os") or {}
    os_text = (
        lookup(os_, "os_release", "PRETTY_NAME")
        or os_.get("build")
        or os_.get("kernel_release")
        or NOT_RECORDED
    )
    return {
        "experiment_id": m.get("experiment_id"),
        "status": m.get("status"),
        "model_tier": m.get("model_tier"),
        "artifact_sha256": m.get("artifact_sha256"),
        "code": lookup(m, "revisions", "code"),
        "machine": fact("machine"),
        "os": str(os_text),
        "power_source": fact("power_source"),
        "power_mode": fact("power_mode"),
        "prompts": f"{seq.n:,} prompts, SHA-256 {seq.sha256 or NOT_RECORDED}",
        "repetitions": repetitions(view),
        "warmup": m.get("warmup_iterations"),
        "trials_per_policy": m.get("trials_per_policy"),
        "baseline": m.get("baseline_policy"),
        "minimums": (
            f"sampling every {mins.get('sampling_interval_s')} s; a window of at "
            f"least {mins.get('window_seconds')} s, {mins.get('sample_periods')} "
            f"readings, {mins.get('counter_updates')} counter updates; gaps over "
            f"{minimums(view)['gap_factor']:g} periods"
        )
        if mins
        else NOT_RECORDED,
        "gates": json_safe(m.get("gates")),
        "floor": lookup(m, "placement", "operation_share_floor"),
        "reference": lookup(m, "reference", "artifact_file") or lookup(m, "reference", "artifact"),
        "timer_scope": m.get("timer_scope") or NOT_RECORDED,
        "notes": m.get("notes"),
    }
