"""Stage 5 of `runner residency`: read every trial's outputs and power trace back from disk
and write what the run claims from them (docs/run-dir-residency.md, "Conventions"):
`trials.csv`, `policies.csv` with each policy's verdict (B4, B7, B8), the energy summaries
`energy/<policy_id>/trial-<n>.json` and `idle.json`, and `environment.json` (B1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runner import artifacts
from runner.b import claims
from runner.b.config import ResidencyConfig
from runner.b.energy.window import Analysis, Minimums, analyse
from runner.b.manifest import build_manifest
from runner.b.power_state import PowerStateEvidence
from runner.b.state import Declaration, Inputs, PolicyState
from runner.b.trials import Instruments, TrialRun
from runner.environment import observe_residency


def write(
    cfg: ResidencyConfig,
    root: Path,
    inputs: Inputs,
    decl: Declaration,
    states: dict[str, PolicyState],
    runs: list[TrialRun],
    inst: Instruments,
    gpus: list[dict[str, Any]],
    power_state: PowerStateEvidence | None = None,
    load: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Read every trial's files back, write the claims, the energy summaries and the
    environment; return the manifest (without `artifacts`)."""
    env = observe_residency(gpus, decl.revisions.code, decl.load_before)
    env["concurrent_load"].update(load or {})
    artifacts.write_json(root / "environment.json", env)
    power_state = power_state or PowerStateEvidence()
    if env["gpus"] and power_state.discrete_gpu is None:
        power_state.discrete_gpu = "environment.json lists " + ", ".join(
            str(g.get("name")) for g in env["gpus"]
        )
    by_trial = {(r.policy_id, r.trial_index): r for r in runs}
    mins = cfg.energy.minimums
    trial_rows: list[dict[str, Any]] = []
    policy_rows: list[dict[str, Any]] = []
    figures: dict[str, claims.PolicyFigures] = {}
    answers_of: dict[str, list[tuple[str, str]]] = {}
    for pid, state in states.items():
        idle_w = _idle(root, pid, state, cfg, mins, inst)
        ok: list[claims.TrialFigures] = []
        latencies: list[float] = []
        answers: list[tuple[str, str]] = []
        for n in range(1, cfg.trials_per_policy + 1):
            run = by_trial.get((pid, n))
            if run is None:
                trial_rows.append(_blocked_row(cfg, decl, state, n))
                continue
            outputs = claims.TrialOutputs.read(root / f"outputs/{pid}/trial-{n}.jsonl")
            # the window's bounds and length come from the trace's markers, as written
            energy = _trial_energy(root / f"power/{pid}/trial-{n}{inst.extension}", run, inst, mins)
            _require_coverage(state, energy)
            fig = claims.TrialFigures(
                len(outputs.ids),
                claims.nearest_rank(outputs.latencies_ms),
                energy.window_seconds,
                energy,
            )
            complete = outputs.follows(decl.ids, cfg.energy.repetitions)
            status = run.status if complete or run.status != "ok" else "failed"
            _write_energy(root, pid, n, cfg, fig, idle_w, run.monotonic_seconds, inst.extension)
            trial_rows.append(_trial_row(cfg, decl, state, run, fig, status, complete))
            if status == "ok":
                ok.append(fig)
                latencies += outputs.latencies_ms
                answers += outputs.answers()
        figures[pid] = claims.pool(ok, latencies)
        answers_of[pid] = answers or (
            claims.read_answers(root / f"gates/{pid}.jsonl")
            if (root / f"gates/{pid}.jsonl").is_file()
            else []
        )
    baseline = figures.get(cfg.baseline_policy)
    for pid, state in states.items():
        share = None
        if state.spec.role == "accelerator" and state.placement_file:
            placed = json.loads((root / state.placement_file).read_text(encoding="utf-8"))
            share = placed["summary"].get("operation_share")
        policy_rows.append(
            _policy_row(
                cfg,
                decl,
                state,
                figures[pid],
                baseline,
                answers_of[pid],
                bool(figures[pid].trials),
                share,
            )
        )
    artifacts.write_csv(root / "trials.csv", trial_rows, "trials")
    artifacts.write_csv(root / "policies.csv", policy_rows, "policies")
    manifest = build_manifest(cfg, inputs, decl, states, runs, inst, env)
    manifest.update(
        power_state.section(any(s.spec.runtime == "windows-ml" for s in states.values()))
    )
    if power_state.unshown:
        manifest["notes"] = "; ".join([manifest["notes"], *power_state.unshown]).lstrip("; ")
    return manifest


def _trial_energy(path: Path, run: TrialRun, inst: Instruments, mins: Minimums) -> Analysis:
    """The trial's energy from its trace: the runner's own records (the window's bounds from
    its markers, as written), or an external log's lines over the window the trial ran."""
    if inst.external is None:
        return analyse(_records(path), mins)
    if run.started_at is None or run.ended_at is None:
        return Analysis("not_measured", run.error or "the window never started", None, None, None)
    return inst.external.analyse(path, run.started_at, run.ended_at, mins)


def _require_coverage(state: PolicyState, energy: Analysis) -> None:
    """A figure must cover the unit the policy computes on: a cpu-only policy measured by
    NVML alone would report the GPU board's idle draw as its cost, a GPU policy measured by
    RAPL alone its CPU side only. Such a window is not measured, with the reason, whether
    or not it was long enough (the auditor judges the unit before the resolution too)."""
    if energy.status not in ("measured", "below_resolution") or energy.energy_source is None:
        return
    sources = set(energy.energy_source.split("+"))
    if sources & {"hwinfo", "powermetrics"}:
        return  # a package or combined reading holds the CPU and the SoC's accelerators
    need = "rapl" if state.spec.on_cpu else "nvml"
    if need not in sources:
        unit = "the CPU packages (RAPL)" if need == "rapl" else "the GPU (NVML)"
        energy.status = "not_measured"
        energy.reason = (
            f"{unit} where this policy computes are not measured; "
            f"{energy.energy_source} alone would misstate its cost"
            + (
                f" ({energy.energy_j:.3f} J over the window, kept in `series`)"
                if energy.energy_j is not None
                else ""
            )
        )
        energy.energy_j = energy.average_power_w = None
        energy.energy_source = None


def _records(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _idle(
    root: Path,
    pid: str,
    state: PolicyState,
    cfg: ResidencyConfig,
    mins: Minimums,
    inst: Instruments,
) -> float | None:
    """Write energy/<pid>/idle.json from the idle traces; return the mean idle power."""
    if not state.idle:
        return None
    parts: dict[str, Any] = {}
    powers = []
    for when, rel in sorted(state.idle.items()):
        window = state.idle_windows.get(when)
        result = (
            inst.external.analyse(root / rel, *window, mins)
            if inst.external is not None and window is not None
            else analyse(_records(root / rel), mins, "idle_start", "idle_end")
        )
        parts[when] = {"trace": rel, **result.to_json()}
        if result.status == "measured" and result.average_power_w is not None:
            powers.append(result.average_power_w)
    mean = sum(powers) / len(powers) if len(powers) == len(parts) and powers else None
    reason = (
        None
        if mean is not None
        else "; ".join(f"{w}: {p['reason']}" for w, p in parts.items() if p["reason"])
        or "not measured"
    )
    artifacts.write_json(
        root / f"energy/{pid}/idle.json",
        {
            "format": "idle-power/1",
            "policy_id": pid,
            "seconds_declared": cfg.energy.idle_seconds,
            "before": parts.get("before"),
            "after": parts.get("after"),
            "average_power_w": mean,
            "status": "measured" if mean is not None else "not_measured",
            "reason": reason,
        },
    )
    return mean


def _write_energy(
    root: Path,
    pid: str,
    n: int,
    cfg: ResidencyConfig,
    fig: claims.TrialFigures,
    idle_w: float | None,
    monotonic: float | None,
    extension: str,
) -> None:
    e = fig.energy
    assert e is not None
    net = (
        e.energy_j - idle_w * e.window_seconds
        if fig.measured
        and idle_w is not None
        and e.energy_j is not None
        and e.window_seconds is not None
        else None
    )
    artifacts.write_json(
        root / f"energy/{pid}/trial-{n}.json",
        {
            "format": "energy-window/1",
            "policy_id": pid,
            "trial_index": n,
            "power_trace": f"power/{pid}/trial-{n}{extension}",
            "outputs_file": f"outputs/{pid}/trial-{n}.jsonl",
            "repetitions": cfg.energy.repetitions,
            "inferences": fig.inferences,
            "minimums": cfg.energy.minimums.to_json(),
            **e.to_json(),
            "window_monotonic_seconds": monotonic,
            "joules_per_inference": fig.joules_per_inference,
            "idle_average_power_w": idle_w,
            "net_energy_j": net,
            "net_joules_per_inference": net / fig.inferences
            if net is not None and fig.inferences
            else None,
        },
    )


def _energy_note(e: Analysis, mins: Minimums) -> str:
    counts = (
        ", ".join(
            f"{s.source} {s.domain} {s.device} {s.kind}s {s.readings}"
            + (f" ({s.updates} updates)" if s.kind == "counter" else "")
            for s in e.series
        )
        or "no readings"
    )
    window = (
        "window not recorded"
        if e.window_seconds is None
        else f"window {e.window_seconds:.3f} s (declared minimum {mins.window_seconds:.3f} s, "
        f"{mins.counter_updates} counter updates)"
    )
    if e.status == "measured":
        return f"energy from {e.energy_source}: {window}; readings in window: {counts}"
    if e.status == "below_resolution":
        return f"energy below resolution: {e.reason}; {window}; readings in window: {counts}"
    return f"energy not measured: {e.reason}; {window}"


def _trial_row(
    cfg: ResidencyConfig,
    decl: Declaration,
    state: PolicyState,
    run: TrialRun,
    fig: claims.TrialFigures,
    status: str,
    complete: bool,
) -> dict[str, Any]:
    e = fig.energy
    assert e is not None
    notes = [
        f"{cfg.energy.repetitions} repetition(s) of the {len(decl.ids)}-prompt sequence "
        "in the window",
        _energy_note(e, cfg.energy.minimums),
    ]
    if run.error:
        notes.insert(0, f"FAILED: {run.error} ({fig.inferences} answers before it are kept)")
    elif not complete:
        notes.insert(0, "FAILED: the outputs file does not hold the sequence repeated in order")
    notes += [run.power_source.note("power source"), run.power_mode.note("power mode")]
    return {
        **_row_head(cfg, decl, state, run.trial_index),
        "order_position": run.order_position,
        "warmup_iterations": run.warmup,
        "inferences": fig.inferences,
        "started_at": e.started_at,
        "ended_at": e.ended_at,
        "wall_seconds": fig.wall_seconds,
        "p95_latency_ms": fig.p95_ms,
        "average_power_w": e.average_power_w if fig.measured else None,
        "energy_j": e.energy_j if fig.measured else None,
        "joules_per_inference": fig.joules_per_inference,
        "power_source": run.power_source.value,
        "power_mode": run.power_mode.value,
        "energy_source": e.energy_source if fig.measured else None,
        "status": status,
        "notes": "; ".join(notes),
    }


def _blocked_row(
    cfg: ResidencyConfig, decl: Declaration, state: PolicyState, n: int
) -> dict[str, Any]:
    reason = state.trial_block(cfg.gates.measure_rejected_energy) or "not run"
    skipped = state.cannot_start is None and state.fault is None
    return {
        **_row_head(cfg, decl, state, n),
        "status": "skipped" if skipped else "failed",
        "notes": reason,
    }


def _row_head(
    cfg: ResidencyConfig, decl: Declaration, state: PolicyState, n: int
) -> dict[str, Any]:
    return {
        "experiment_id": cfg.experiment_id,
        "policy_id": state.spec.policy_id,
        "role": state.spec.role,
        "trial_index": n,
        "prompt_sequence_sha256": decl.sequence_sha256,
    }


def _policy_row(
    cfg: ResidencyConfig,
    decl: Declaration,
    state: PolicyState,
    fig: claims.PolicyFigures,
    baseline: claims.PolicyFigures | None,
    answers: list[tuple[str, str]],
    from_trials: bool,
    share: float | None,
) -> dict[str, Any]:
    """`share`: the accelerator policy's operation share, from its placement file."""
    spec = state.spec
    accuracy, agreement = claims.accuracy_agreement(
        answers, decl.references, decl.reference_outputs
    )
    accelerator = spec.role == "accelerator"
    verdict, why = judge(cfg, state, fig, baseline, share)
    notes = [why, fig.energy_note]
    if answers:
        notes.append(
            "accuracy and agreement over every answer of the ok trials"
            if from_trials
            else f"accuracy and agreement over the gate pass (gates/{spec.policy_id}.jsonl)"
        )
    if state.gate is not None:
        notes.append(f"gate: {state.gate.summary()}")
    if state.placement_file:
        notes.append(f"placement evidence {state.placement_file}")
    if state.fault:
        notes.append(f"active providers {state.running.active if state.running else []}")
    return {
        "experiment_id": cfg.experiment_id,
        "policy_id": spec.policy_id,
        "role": spec.role,
        "runtime": spec.runtime,
        "compute_units": spec.compute_units,
        "model_tier": cfg.model_tier,
        "trials": fig.trials,
        "median_wall_seconds": fig.median_wall_seconds,
        "p95_latency_ms": fig.p95_ms,
        "average_power_w": fig.average_power_w,
        "joules_per_inference": fig.joules_per_inference,
        "accuracy": accuracy,
        "agreement": agreement,
        "operation_share": share,
        "operation_share_floor": cfg.operation_share_floor if accelerator else None,
        "estimated_cost_share": None,
        "verdict": verdict,
        "notes": "; ".join(notes),
    }


def judge(
    cfg: ResidencyConfig,
    state: PolicyState,
    fig: claims.PolicyFigures,
    baseline: claims.PolicyFigures | None,
    share: float | None,
) -> tuple[str, str]:
    """B4, B7, B8 in order; the first reason to reject is the one given."""
    spec = state.spec
    if spec.policy_id == cfg.baseline_policy:
        block = state.trial_block(cfg.gates.measure_rejected_energy)
        return "baseline", (
            "the cpu-only baseline every accelerator policy is compared with "
            "(B7)"
            + (
                ""
                if block is None
                else f"; it has no trial: {block}; no accelerator policy can "
                "be shown better than it"
            )
        )
    block = state.trial_block(measure_rejected=False)
    if block is not None:
        return "rejected", block
    if fig.trials == 0:
        return "rejected", "no ok trial"
    if spec.role == "cpu-only":
        if cfg.model_tier == "deep":
            return "rejected", "bare CPU is valid only for a lite model (B5)"
        return "accepted", (
            "gates passed and every trial ok; a cpu-only runtime beside the "
            "baseline (B7 compares accelerator policies only)"
        )
    if share is None:
        return "rejected", "no placement evidence of where the operations ran (B4)"
    if share < cfg.operation_share_floor:
        return "rejected", (
            f"operation share {share:.3f} below the floor "
            f"{cfg.operation_share_floor}: a residency failure (B4, B7)"
        )
    if baseline is None or baseline.average_power_w is None or fig.average_power_w is None:
        return "rejected", (
            "B7 not shown: average power and joules per inference of this "
            "policy and of the baseline are not both measured"
        )
    if baseline.energy_source != fig.energy_source:
        return "rejected", (
            f"B7 not shown: this policy's energy comes from "
            f"{fig.energy_source}, the baseline's from "
            f"{baseline.energy_source}"
        )
    assert baseline.joules_per_inference is not None and fig.joules_per_inference is not None
    if (
        fig.average_power_w < baseline.average_power_w
        and fig.joules_per_inference < baseline.joules_per_inference
    ):
        return "accepted", "less average power and fewer joules per inference than the baseline"
    return "rejected", (
        "not both less average power and fewer joules per inference than the cpu-only baseline (B7)"
    )
