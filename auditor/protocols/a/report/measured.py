"""The report's "what was measured" section of protocol A: the manifest's declarations (task,
quality rule printed so that its arithmetic adds up, revisions, variants, passes, timer scope,
truncation, corpus) and the environment as observed (A4.1), in a few rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from auditor.present import NOT_RECORDED, json_safe, lookup
from auditor.protocols.a.report.text import corpus_name, decimals_for

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView


def quality_rule(manifest: dict | None, values: list[float]) -> dict[str, Any] | None:
    """The quality rule in words, with enough digits that its arithmetic adds up, and the
    number of decimals the pass values are shown with."""
    qr = (manifest or {}).get("quality_rule") or {}
    if not qr:
        return None
    ref = got if isinstance(got := qr.get("reference"), Mapping) else {}
    thr, tol, rv = qr.get("threshold"), qr.get("tolerance"), ref.get("value")
    nums = [v for v in (thr, rv, *values) if isinstance(v, (int, float))]
    floor = rv - tol if isinstance(rv, (int, float)) and isinstance(tol, (int, float)) else None
    if floor is not None:
        nums.append(floor)
    d = decimals_for(
        nums,
        reference=rv if floor is not None else None,
        tolerance=tol if floor is not None else None,
    )

    def f(v: Any) -> str:
        return f"{v:.{d}f}" if isinstance(v, float) else str(v)

    parts = [f"{qr.get('metric')} >= {f(thr)}"] if thr is not None else []
    if floor is not None:
        parts.append(
            f"{qr.get('metric')} >= reference {f(rv)} - tolerance {tol} = {f(floor)}"
            f" ({qr.get('tolerance_direction')}; reference: {ref.get('name')})"
        )
    return {
        "text": " and ".join(parts),
        "decimals": d,
        "metric": qr.get("metric"),
        "threshold": thr,
        "reference": rv,
        "tolerance": tol,
        "floor": floor,
    }


def measured_section(view: RunView, quality_values: list[float]) -> dict[str, Any]:
    m = view.manifest or {}
    trunc = lookup(m, "corpus", "truncation") or {}
    truncation = None
    if trunc:
        n, cut = trunc.get("eval_texts"), trunc.get("truncated_texts")
        share = (
            f" ({100 * cut / n:.1f} %)" if isinstance(n, int) and n and isinstance(cut, int) else ""
        )
        truncation = (
            f"{cut} of {n} evaluation texts cut at {trunc.get('context_tokens')} "
            f"tokens{share}" + (f"; rule: {trunc['rule']}" if trunc.get("rule") else "")
        )
    timer = {
        "full_chain": "full chain: reading, tokenization, classification and writing",
        "processing_only": "processing only: classification alone",
    }.get(m.get("timer_scope", ""), NOT_RECORDED)
    variants = [
        {k: v.get(k) for k in ("variant_id", "batch", "precision", "context", "device")}
        for v in m.get("variants") or []
        if isinstance(v, Mapping)
    ]
    return {
        "experiment_id": m.get("experiment_id"),
        "protocol": m.get("protocol"),
        "status": m.get("status"),
        "declared_at": m.get("declared_at"),
        "unit_of_work": lookup(m, "task", "unit_of_work"),
        "classes": json_safe(lookup(m, "task", "classes")),
        "quality_rule": quality_rule(m, quality_values),
        "revisions": json_safe(m.get("revisions")),
        "seed": m.get("seed"),
        "announced_variable": m.get("announced_variable"),
        "variants": json_safe(variants),
        "warmup_iterations": m.get("warmup_iterations"),
        "warm_passes_per_variant": m.get("warm_passes_per_variant"),
        "pass_order_method": m.get("pass_order_method"),
        "timer_scope": timer,
        "timer_scope_description": m.get("timer_scope_description"),
        "truncation": truncation or NOT_RECORDED,
        "corpus": {
            "source": corpus_name(lookup(m, "corpus", "source")),
            "revision": lookup(m, "corpus", "revision"),
            "eval_size": lookup(m, "corpus", "eval_size"),
        },
        "environment": environment_rows(view.environment),
        "notes": m.get("notes"),
    }


def load_text(env: dict) -> str | None:
    """The 1-minute load averages recorded before and after the passes, in words."""
    load = env.get("concurrent_load") or {}
    parts = [
        f"{x[0]:.2f} {when}"
        for when, x in (
            ("before the passes", load.get("loadavg_before_passes")),
            ("after", load.get("loadavg")),
        )
        if isinstance(x, list) and x
    ]
    return ", ".join(parts) or None


def environment_rows(env: dict | None) -> list[dict[str, str]]:
    """The environment as observed, in a few rows (A4.1)."""
    if not env:
        return [{"label": "environment.json", "value": NOT_RECORDED}]
    rt = env.get("runtime") or {}
    host = env.get("host") or {}
    procs = lookup(env, "concurrent_load", "gpu_processes")
    gpu = (
        f"{env.get('gpu_model')} x {env.get('gpu_count')} used of "
        f"{env.get('gpus_visible', '?')} visible, driver {env.get('driver_version')}"
        if env.get("gpu_model")
        else "none used (placement evidence)"
    )
    rows = [
        ("Device", env.get("device")),
        ("GPU", gpu),
        (
            "Software",
            f"Python {env.get('python_version')}, PyTorch {env.get('torch_version')}, "
            f"runtime {rt.get('name')} {rt.get('version') or ''}".strip(),
        ),
        (
            "Host",
            " ".join(str(host[k]) for k in ("platform", "machine") if host.get(k))
            + (f", {host['cpu_count']} CPUs" if host.get("cpu_count") else ""),
        ),
        ("Code version", env.get("code_version")),
        (
            "Concurrent load",
            "1-minute load average "
            + (load_text(env) or NOT_RECORDED)
            + "; other GPU processes: "
            + (
                f"not observed (NVML {lookup(env, 'concurrent_load', 'nvml')})"
                if procs is None
                else str(len(procs))
            ),
        ),
        ("Observed at", env.get("observed_at")),
    ]
    return [
        {"label": k, "value": NOT_RECORDED if v is None or v == "" else str(v)} for k, v in rows
    ]
