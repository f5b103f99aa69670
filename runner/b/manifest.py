"""The protocol B `manifest.json`, built from one small piece per section (the shared
`Header` and `Revisions`, then the model, the prompt sequence and reference, the policies,
the trials, the energy window, the gates and placement floors, B1), validated against
`schemas/manifest-residency.schema.json` when the run is published."""

from __future__ import annotations

import time
from typing import Any

from runner.b.config import ResidencyConfig
from runner.b.layout import (
    CONFIG_COPY,
    PROTOCOL,
    REFERENCE_FILE,
    SEQUENCE_FILE,
    rel_path,
)
from runner.b.policies import requested_providers
from runner.b.state import Declaration, Inputs, PolicyState
from runner.b.trials import Instruments, TrialRun
from runner.manifest import Header
from runner.onnx_export import ONNX_FILE

TRIAL_ORDER_METHOD = (
    "drawn from the seed before any measurement: one seeded permutation of "
    "the run's policies per round (round n holds every policy's trial n), "
    "redrawn so a round never starts with the policy that ended the "
    "previous one (trial_order_drawn). When policies are left without trials "
    "(a fault, a failed start, a rejected candidate: all known before the "
    "first trial), the order is drawn again the same way, from the same "
    "seed, among the policies that run, so they still alternate "
    "(trial_order)"
)

TIMER_SCOPE = (
    "each latency_ms is one batch-one classification: tokenization, the model and "
    "the label, nothing else; wall_seconds is the whole window (every repetition), "
    "between the window markers"
)


def build_manifest(
    cfg: ResidencyConfig,
    inputs: Inputs,
    decl: Declaration,
    states: dict[str, PolicyState],
    runs: list[TrialRun],
    inst: Instruments,
    env: dict[str, Any],
) -> dict[str, Any]:
    """The manifest without `artifacts` (added when the run dir is published)."""
    return {
        **Header(PROTOCOL, cfg.experiment_id, True, decl.declared_at, cfg.source).to_json(),
        "config_file": CONFIG_COPY,
        "seed": cfg.seed,
        "notes": cfg.notes,
        **model_section(cfg, inputs, decl),
        **sequence_section(inputs, decl),
        **policies_section(cfg, inputs, states),
        **trials_section(cfg, decl, runs, len(states)),
        "energy": energy_section(cfg, decl, inst),
        "gates": {
            "accuracy_floor": cfg.gates.accuracy_floor,
            "agreement_floor": cfg.gates.agreement_floor,
            "measure_rejected_energy": cfg.gates.measure_rejected_energy,
            "file": "gates/gates.json",
        },
        "placement": {
            "diagnostic_prompts": cfg.diagnostic_prompts,
            "operation_share_floor": cfg.operation_share_floor,
        },
        **b1_section(env),
        **({"off_protocol": inputs.off_protocol} if inputs.off_protocol else {}),
    }


def model_section(cfg: ResidencyConfig, inputs: Inputs, decl: Declaration) -> dict[str, Any]:
    """B1's artifact SHA-256 (the trained model every policy derives from), the ONNX export
    and its `replay` section (runner.replay), the revisions and the workload."""
    prepared = decl.trained.prepared
    return {
        "model_tier": cfg.model_tier,
        "artifact_sha256": decl.revisions.model.removeprefix("sha256:"),
        "artifact": {
            "file": rel_path(decl.trained.model_dir.parent, prepared.weights_file),
            "description": prepared.description,
            "note": "the trained float32 model every policy derives from; each "
            "policy names the artifact it runs (policies[].artifact_file)",
        },
        "onnx_export": decl.onnx.to_json(ONNX_FILE) if decl.onnx else None,
        **decl.replay,
        "revisions": decl.revisions.to_json(),
        "workload": {
            "name": inputs.factory.name,
            "callable": cfg.workload_callable,
            "options": inputs.recorded_options,
            "context": cfg.context,
            "description": prepared.description,
            "train_seconds": decl.trained.train_seconds,
            "threads": inputs.threads.torch,
        },
        "threads": inputs.threads.to_json(),
    }


def sequence_section(inputs: Inputs, decl: Declaration) -> dict[str, Any]:
    """The task, the fixed prompt sequence (B2, B10) and the reference artifact (B8)."""
    return {
        "task": {
            "classes": list(decl.classes),
            "output_format": {
                "type": "jsonl",
                "required_fields": ["id", "label", "latency_ms"],
                "label_values": "one of task.classes",
            },
        },
        "prompt_sequence": {
            "file": SEQUENCE_FILE,
            "sha256": decl.sequence_sha256,
            "prompts": len(decl.ids),
            "corpus_source": inputs.corpus.source,
            "corpus_revision": inputs.corpus.revision,
        },
        "reference": {"file": REFERENCE_FILE, **decl.reference},
    }


def policies_section(
    cfg: ResidencyConfig, inputs: Inputs, states: dict[str, PolicyState]
) -> dict[str, Any]:
    spec_of = {p.policy_id: p for p in cfg.policies}
    return {
        "baseline_policy": cfg.baseline_policy,
        "policies": [policy_entry(s) for s in states.values()],
        "policies_left_out": [
            {**{k: v for k, v in spec_of[pid].to_json().items()}, "reason": reason}
            for pid, reason in inputs.left_out.items()
        ],
    }


def policy_entry(state: PolicyState) -> dict[str, Any]:
    """One policy as it ran: what was asked, what it ran on, or why it did not."""
    spec, running = state.spec, state.running
    failed_gate = state.gate is not None and not state.gate.passed
    status = (
        "cannot_start"
        if state.cannot_start
        else "fault"
        if state.fault
        else "rejected_at_gate"
        if failed_gate
        else "ran"
    )
    entry: dict[str, Any] = {
        **spec.to_json(),
        "status": status,
        "reason": state.cannot_start
        or state.fault
        or ("; ".join(state.gate.failures()) if state.gate and failed_gate else None),
        "device": running.device if running else None,
        "artifact_file": state.artifact[0] if state.artifact else None,
        "artifact_sha256": state.artifact[1] if state.artifact else None,
        "placement_file": state.placement_file,
        "idle_files": dict(state.idle),
    }
    if spec.runtime == "onnxruntime":
        entry["requested_providers"] = requested_providers(spec)
        entry["active_providers"] = running.active if running else None
    elif spec.runtime == "windows-ml":
        if not spec.compute_units.upper().startswith(("DEFAULT", "PREFER_", "MAX_", "MIN_")):
            entry["requested_providers"] = [spec.compute_units]
        entry["active_providers"] = running.active if running else None
    return entry


def trials_section(
    cfg: ResidencyConfig, decl: Declaration, runs: list[TrialRun], policies: int
) -> dict[str, Any]:
    """B3: how many trials, the warm-up, and the order drawn and run."""
    return {
        "trials_per_policy": cfg.trials_per_policy,
        "planned_trials": cfg.trials_per_policy * policies,
        "warmup_iterations": cfg.warmup,
        "trial_order": [[r.policy_id, r.trial_index] for r in runs],
        "trial_order_drawn": [[pid, n] for pid, n in decl.planned_order],
        "trial_order_method": TRIAL_ORDER_METHOD,
        "timer_scope": TIMER_SCOPE,
        "timer_includes_tokenization": True,
    }


def energy_section(cfg: ResidencyConfig, decl: Declaration, inst: Instruments) -> dict[str, Any]:
    """B6: the declared window, its resolution floor and the instruments (or why none)."""
    e = cfg.energy
    return {
        "repetitions": e.repetitions,
        "inferences_per_trial": e.repetitions * len(decl.ids),
        "minimums": e.minimums.to_json(),
        "idle_seconds": e.idle_seconds,
        "instruments": inst.describe(),
        "measured": bool(inst.usable),
        "not_measured_reason": None if inst.usable else inst.reason,
    }


def b1_section(env: dict[str, Any]) -> dict[str, Any]:
    """B1's power state (as observed when the run ended; each trial's is in trials.csv)."""
    offset = time.strftime("%z")
    return {
        "environment_file": "environment.json",
        "power_source": env["power_source"],
        "power_mode": env["power_mode"],
        "local_utc_offset": f"{offset[:3]}:{offset[3:]}",
    }
