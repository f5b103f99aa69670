"""Stages 3 and 4 of `runner residency`, between the declaration and the timed trials:
`coreml_packages` (the Core ML packages converted, when a coreml policy is declared),
`start_policies` (each policy started, or recorded as unable to start or faulted),
`run_gates` (B8: each started policy classifies the fixed sequence once, judged against the
floors) and `run_placement` (B4, B5: one diagnostic pass per started policy), and `gpus_used`
(the GPUs of the started policies, which NVML reads for the trials)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from runner import artifacts
from runner.b import claims, coreml, gates, winml
from runner.b.config import ResidencyConfig
from runner.b.layout import rel_path
from runner.b.placement import ort_placement, torch_placement
from runner.b.policies import CannotStart, OrtPolicy, TorchPolicy, start
from runner.b.state import Declaration, Inputs, PolicyState
from runner.environment import gpu_identity
from runner.onnx_export import ONNX_FILE
from runner.rundir import Progress

__all__ = ["coreml_packages", "gpus_used", "run_gates", "run_placement", "start_policies"]


def coreml_packages(
    cfg: ResidencyConfig, root: Path, inputs: Inputs, decl: Declaration, say: Progress
) -> list[dict[str, Any]] | None:
    """The Core ML packages (runner.b.coreml_convert) when a coreml policy is declared,
    converted on any OS, whether or not this machine can run their predictions."""
    if not any(p.runtime == "coreml" for p in cfg.policies):
        return None
    if decl.files.tensor_form is None or decl.onnx is None:
        return [
            {
                "name": "float16",
                "status": "failed",
                "reason": "no ONNX export of the workload to compare with (B5)",
            }
        ]
    from runner.b.coreml_convert import convert_packages

    tune = inputs.corpus.split("tune")["text"].to_list()
    return convert_packages(
        decl.files.tensor_form,
        tune,
        root,
        {
            "source_onnx_sha256": decl.onnx.sha256,
            "source_weights_sha256": decl.revisions.model.removeprefix("sha256:"),
        },
        say,
    )


def start_policies(
    cfg: ResidencyConfig,
    inputs: Inputs,
    decl: Declaration,
    say: Progress,
    root: Path,
    packages: list[dict[str, Any]],
) -> dict[str, PolicyState]:
    states: dict[str, PolicyState] = {}
    for spec in inputs.policies:
        state = PolicyState(spec)
        try:
            if spec.runtime == "coreml":
                if decl.files.tensor_form is None:
                    raise CannotStart("the workload offers no tensor form to convert")
                state.running, state.artifact = coreml.start(
                    spec, root, packages, decl.files.tensor_form
                )
            else:
                state.running = (
                    winml.start(spec, decl.files, root, inputs.plugins)
                    if spec.runtime == winml.RUNTIME
                    else start(spec, decl.files)
                )
        except CannotStart as exc:
            state.cannot_start = str(exc)
        if spec.runtime == "coreml":
            pass  # its artifact is its package (set at start)
        elif spec.runtime in ("onnxruntime", winml.RUNTIME) and decl.onnx is not None:
            state.artifact = (ONNX_FILE, decl.onnx.sha256)
        elif spec.runtime == "torch":
            state.artifact = (
                rel_path(decl.trained.model_dir.parent, decl.trained.prepared.weights_file),
                decl.revisions.model.removeprefix("sha256:"),
            )
        states[spec.policy_id] = state
        what = (
            f"could not start: {state.cannot_start}"
            if state.cannot_start
            else f"FAULT: {state.fault}"
            if state.fault
            else f"started on {state.running.device if state.running else '?'}"
        )
        say(
            f"policy {spec.policy_id} ({spec.runtime} {spec.compute_units}, "
            f"{spec.precision}, {spec.role}): {what}"
        )
    for pid, reason in inputs.left_out.items():
        say(f"policy {pid}: left out ({reason})")
    return states


def run_gates(
    cfg: ResidencyConfig,
    root: Path,
    decl: Declaration,
    states: dict[str, PolicyState],
    say: Progress,
) -> None:
    results: list[gates.GateResult] = []
    skipped: dict[str, str] = {}
    for pid, state in states.items():
        if state.running is None or state.fault is not None:
            skipped[pid] = state.trial_block(True) or "not started"
            continue
        answers = gates.classify_sequence(state.running.classify_one, decl.ids, decl.texts)
        artifacts.write_jsonl(root / f"gates/{pid}.jsonl", answers)
        # the gate is judged on the file as written
        got = claims.read_answers(root / f"gates/{pid}.jsonl")
        acc, agr = claims.accuracy_agreement(got, decl.references, decl.reference_outputs)
        state.gate = gates.GateResult(
            pid,
            len(got),
            acc or 0.0,
            agr or 0.0,
            cfg.gates.accuracy_floor,
            cfg.gates.agreement_floor,
        )
        results.append(state.gate)
        say(
            f"gate {pid}: {state.gate.summary()}: "
            + ("passed" if state.gate.passed else "REJECTED")
        )
    artifacts.write_json(
        root / "gates/gates.json",
        gates.gates_record(
            results,
            skipped,
            cfg.gates.accuracy_floor,
            cfg.gates.agreement_floor,
            decl.reference,
            {pid: s.artifact[1] for pid, s in states.items() if s.artifact},
        ),
    )


def run_placement(
    cfg: ResidencyConfig,
    root: Path,
    decl: Declaration,
    states: dict[str, PolicyState],
    say: Progress,
) -> None:
    """One diagnostic pass per started policy (faulted ones included: their placement is the
    evidence of the fault)."""
    texts = decl.texts[: cfg.diagnostic_prompts]
    for pid, state in states.items():
        policy = state.running
        if isinstance(policy, coreml.CoremlPolicy):
            if state.spec.role != "accelerator":
                continue  # the cpuOnly diagnostic has no accelerator to place
            rel = f"placement/{pid}.computeplan.log"
            try:
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(coreml.compute_plan(policy), encoding="utf-8")
            except Exception as exc:  # MLComputePlan needs macOS 14.4 and coremltools 8
                say(f"placement {pid}: no compute plan ({type(exc).__name__}: {exc})")
                continue
            state.placement_file = rel
            say(f"placement {pid}: {rel}")
            continue
        if isinstance(policy, winml.WinmlPolicy) and decl.onnx is not None:
            rel = f"placement/{pid}.winml.json"
            record = policy.record(decl.onnx.sha256)
        elif isinstance(policy, TorchPolicy):
            rel = f"placement/{pid}.torch.json"
            record = torch_placement(policy, texts)
        elif isinstance(policy, OrtPolicy) and decl.onnx is not None:
            rel = f"placement/{pid}.ort.json"
            profile = f"placement/{pid}.ort-profile.json"
            record = ort_placement(
                policy,
                texts,
                decl.onnx.file,
                decl.files.threads,
                decl.onnx.sha256,
                root / profile,
                profile,
            )
        else:
            continue
        artifacts.write_json(root / rel, record)
        state.placement_file = rel
        share = record["summary"].get("operation_share")
        say(
            f"placement {pid}: {rel}, operation share on {policy.device}: "
            + ("-" if share is None else f"{share:.3f}")
        )


def gpus_used(states: dict[str, PolicyState]) -> list[dict[str, Any]]:
    """The GPUs of the run's torch CUDA policies (NVML reads these for every policy)."""
    indices = sorted(
        {
            torch.device(s.running.device).index or 0
            for s in states.values()
            if isinstance(s.running, TorchPolicy) and s.running.device.startswith("cuda")
        }
    )
    if (
        not indices
        and any(
            isinstance(s.running, OrtPolicy)
            and s.fault is None
            and s.spec.compute_units != "CPUExecutionProvider"
            for s in states.values()
        )
        and torch.cuda.is_available()
    ):
        indices = [0]  # ORT's CUDA and TensorRT providers use device 0 by default
    return [gpu_identity(i, torch.cuda) for i in indices]
