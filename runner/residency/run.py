"""`runner residency`: protocol B from configuration to a complete run directory.

Stages, in this order, so that nothing measured can influence what was declared:
1. `check_inputs`: config, workload, corpus, the reference answers file if one is named, and
   which policies this machine can run (a `when = "available"` policy it cannot is left out,
   with the reason); any fault stops here with exit 2 and nothing written;
2. `declare`: stage the prompt sequence, references and config copy, train the model, compute
   (or copy) the reference artifact's answers, export the ONNX artifact when an ONNX Runtime
   policy is declared, draw the trial order from the seed, note the declaration time;
3. `start_policies`: sessions and devices; a policy that cannot start, or whose runtime runs
   something else than asked (ONNX Runtime's silent CPU fallback), is recorded as such;
4. `run_gates` (B8) and `run_placement` (B4, B5): outside the timed trials;
5. `run_trials`: idle power before each policy's first trial and after its last, the trials
   in the drawn order for the policies that passed their gates;
6. `read_back` every output and power trace to compute the claims, then `write` trials.csv,
   policies.csv, the energy summaries, environment and manifest; `StagedRunDir.publish`
   validates all of it against the schemas and renames the directory into place.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner import artifacts
from runner.corpus import Corpus, load_corpus
from runner.energy.base import Instrument
from runner.energy.window import Analysis, Minimums, analyse
from runner.environment import loadavg, observe_residency
from runner.execute import alternating_rounds
from runner.manifest import Header, Revisions
from runner.memory import gpu_identity
from runner.model import TrainedModel, train, workload_threads
from runner.passes import now_iso
from runner.residency import claims, gates
from runner.residency.config import PolicySpec, ResidencyConfig
from runner.residency.onnx_export import OnnxExport, export
from runner.residency.placement import ort_placement, torch_placement
from runner.residency.policies import (
    CannotStart,
    ModelFiles,
    OrtPolicy,
    RunningPolicy,
    TorchPolicy,
    availability,
    requested_providers,
    start,
)
from runner.residency.trials import (
    Instruments,
    TrialRun,
    default_instruments,
    measure_idle,
    open_instruments,
    run_trial,
)
from runner.revisions import code_revision, file_sha256
from runner.rundir import Progress, StagedRunDir, Steps, refuse_existing
from runner.workloads import WorkloadFactory, resolve

PROTOCOL = "residency-energy"
SEQUENCE_FILE = "prompts/sequence.jsonl"
REFERENCE_FILE = "reference/outputs.jsonl"
ONNX_FILE = "model/model.onnx"
CONFIG_COPY = "config/residency.toml"

#: Which schema covers which file of a protocol B run dir (docs/run-dir-residency.md).
LAYOUT = artifacts.Layout(
    rules=(
        ("manifest.json", "json", "manifest_residency"),
        ("trials.csv", "table", "trials"),
        ("policies.csv", "table", "policies"),
        (SEQUENCE_FILE, "jsonl", "prompt_line"),
        ("corpus/references.jsonl", "jsonl", "reference_line"),
        (REFERENCE_FILE, "jsonl", "reference_line"),
        ("outputs/*/trial-*.jsonl", "jsonl", "trial_output_line"),
        ("power/*/trial-*.jsonl", "jsonl", "runner_power_record"),
        ("idle/*/*.jsonl", "jsonl", "runner_power_record"),
        ("placement/*.torch.json", "json", "torch_placement"),
        ("placement/*.ort.json", "json", "ort_placement"),
        ("placement/*.ort-profile.json", "json-raw", "onnxruntime profile"),
        ("energy/*/trial-*.json", "json", "energy_window"),
        ("energy/*/idle.json", "json", "idle_power"),
        ("gates/gates.json", "json", "gates"),
        ("gates/*.jsonl", "jsonl", "output_line"),
        ("environment.json", "json", "environment_residency"),
    ),
    raw=("model/*", CONFIG_COPY),
    strict=True,
)

TRIAL_ORDER_METHOD = ("drawn from the seed before any measurement: one seeded permutation of "
                      "the run's policies per round (round n holds every policy's trial n), "
                      "redrawn so a round never starts with the policy that ended the "
                      "previous one; policies left without trials (a fault, a failed start, "
                      "a rejected candidate) are dropped from it, the rest keep its order")


# --- 1. inputs ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Inputs:
    factory: WorkloadFactory
    corpus: Corpus
    threads: int
    policies: tuple[PolicySpec, ...]
    """The policies of the run."""
    left_out: dict[str, str]
    """`when = "available"` policies this machine cannot run -> why."""
    reference_answers: list[dict[str, str]] | None
    """The user's accepted reference answers, when the config names a file."""


def check_inputs(cfg: ResidencyConfig, out: Path) -> Inputs:
    refuse_existing(out)
    factory = resolve(cfg.workload_callable)
    factory.check(cfg.workload_options)
    corpus = load_corpus(cfg.corpus_path, cfg.eval_size, cfg.max_texts, cfg.seed)
    ev = corpus.split("eval")
    reference = None
    if cfg.gates.reference_outputs is not None:
        reference = gates.read_reference_outputs(cfg.gates.reference_outputs,
                                                 ev["id"].to_list(), corpus.classes)
    left_out: dict[str, str] = {}
    run: list[PolicySpec] = []
    for spec in cfg.policies:
        reason = availability(spec) if spec.when == "available" else None
        if reason is None:
            run.append(spec)
        else:
            left_out[spec.policy_id] = reason
    return Inputs(factory, corpus, workload_threads(factory), tuple(run), left_out, reference)


def residency(cfg: ResidencyConfig, out: Path, progress: Progress | None = None, *,
              instruments: list[Instrument] | None = None) -> Path:
    """Run protocol B as `cfg` says and write the complete run directory at `out`.
    `instruments` replaces the configured NVML/RAPL readers (tests hand in fakes)."""
    say = progress or (lambda _msg: None)
    inputs = check_inputs(cfg, out)
    staged = StagedRunDir.create(out, say)
    with staged.unfinished():
        root = staged.root
        decl = declare(cfg, root, inputs, say)
        states = start_policies(cfg, inputs, decl, say)
        run_gates(cfg, root, decl, states, say)
        run_placement(cfg, root, decl, states, say)
        gpus = _gpus_used(states)
        inst = open_instruments(instruments if instruments is not None else
                                default_instruments(cfg.energy.instruments,
                                                    [(g["index"], g["uuid"]) for g in gpus],
                                                    cfg.energy.powercap_root,
                                                    cfg.energy.minimums.max_watts))
        try:
            say("energy: " + (", ".join(i.source for i in inst.usable) or "not measured")
                + (f" ({inst.reason})" if inst.missing else ""))
            runs = run_trials(cfg, root, decl, states, inst, say)
        finally:
            inst.close()
        for state in states.values():
            if state.running is not None:
                state.running.close()
        manifest = write(cfg, root, inputs, decl, states, runs, inst, gpus)
        staged.publish(manifest, LAYOUT, "manifest_residency")
    ok = sum(1 for r in runs if r.status == "ok")
    say(f"done: {out} ({ok}/{len(runs)} trials ok)")
    return out


# --- 2. the declaration ---------------------------------------------------------------------

@dataclass(frozen=True)
class Declaration:
    ids: list[str]
    texts: list[str]
    classes: tuple[str, ...]
    references: dict[str, str]
    reference_outputs: dict[str, str]
    reference: dict[str, Any]
    sequence_sha256: str
    trained: TrainedModel
    files: ModelFiles
    onnx: OnnxExport | None
    revisions: Revisions
    planned_order: list[tuple[str, int]]
    declared_at: str
    load_before: list[float] | None


def declare(cfg: ResidencyConfig, root: Path, inputs: Inputs, say: Progress) -> Declaration:
    corpus = inputs.corpus
    ev = corpus.split("eval")
    ids, texts = ev["id"].to_list(), ev["text"].to_list()
    artifacts.write_jsonl(root / SEQUENCE_FILE, ev.select("id", "text").to_dicts())
    artifacts.write_jsonl(root / "corpus/references.jsonl", ev.select("id", "label").to_dicts())
    (root / CONFIG_COPY).parent.mkdir(parents=True, exist_ok=True)
    (root / CONFIG_COPY).write_text(cfg.text, encoding="utf-8")
    say(f"corpus: {corpus.split('train').height} train texts, a fixed sequence of {len(ids)} "
        f"prompts, {len(corpus.classes)} classes; training the model")
    trained = train(inputs.factory, corpus, root / "model", cfg.seed, cfg.context,
                    cfg.workload_options)
    workload = inputs.factory.load(trained.model_dir, "cpu", "float32", cfg.context,
                                   cfg.workload_options)
    weights_sha = file_sha256(trained.prepared.weights_file)
    if inputs.reference_answers is None:
        answers = gates.classify_sequence(lambda t: workload.classify([t], 1)[0], ids, texts)
        reference = {"artifact": "the workload's torch float32 answers on the CPU, batch one, "
                                 "computed before the trials",
                     "artifact_file": _rel(root, trained.prepared.weights_file),
                     "artifact_sha256": weights_sha}
    else:
        answers = inputs.reference_answers
        assert cfg.gates.reference_outputs is not None
        reference = {"artifact": f"accepted reference answers from {cfg.gates.reference_outputs}",
                     "artifact_file": None,
                     "artifact_sha256": file_sha256(cfg.gates.reference_outputs)}
    artifacts.write_jsonl(root / REFERENCE_FILE, answers)
    form = workload.tensor_form()
    onnx = None
    if form is not None and any(p.runtime == "onnxruntime" for p in inputs.policies):
        onnx = export(form, root / ONNX_FILE)
        say(f"onnx: {ONNX_FILE} exported in {onnx.seconds:.1f} s, sha256 {onnx.sha256[:16]}...")
    files = ModelFiles(inputs.factory, trained.model_dir, cfg.context, cfg.workload_options,
                       onnx.file if onnx else None, form if onnx else None, inputs.threads)
    rounds = alternating_rounds([p.policy_id for p in inputs.policies],
                                cfg.trials_per_policy, random.Random(cfg.seed))
    return Declaration(
        ids=ids, texts=texts, classes=corpus.classes,
        references=dict(zip(ids, ev["label"].to_list(), strict=True)),
        reference_outputs={a["id"]: a["label"] for a in answers}, reference=reference,
        sequence_sha256=file_sha256(root / SEQUENCE_FILE), trained=trained, files=files,
        onnx=onnx,
        revisions=Revisions(corpus=corpus.revision, model="sha256:" + weights_sha,
                            tokenizer="sha256:" + file_sha256(
                                trained.prepared.tokenizer_file),
                            code=code_revision()),
        planned_order=rounds, declared_at=now_iso(), load_before=loadavg())


def _rel(root: Path, path: Path) -> str:
    return path.resolve().relative_to(root.resolve()).as_posix()


# --- 3. policies, gates, placement ----------------------------------------------------------

@dataclass
class PolicyState:
    spec: PolicySpec
    running: RunningPolicy | None = None
    cannot_start: str | None = None
    gate: gates.GateResult | None = None
    placement_file: str | None = None
    placement_summary: dict[str, Any] = field(default_factory=dict)
    idle: dict[str, str] = field(default_factory=dict)
    """before/after -> idle trace file."""
    artifact: tuple[str, str] | None = None
    """(file, sha256) of the artifact this policy runs."""

    @property
    def fault(self) -> str | None:
        return self.running.fault if self.running is not None else None

    def trial_block(self, measure_rejected: bool) -> str | None:
        """Why this policy runs no trial, or None."""
        if self.cannot_start is not None:
            return f"could not start: {self.cannot_start}"
        if self.fault is not None:
            return (f"policy fault: {self.fault}; never measured as an accelerator result")
        if self.gate is not None and not self.gate.passed and not measure_rejected:
            return (f"rejected at the gate (B8): {'; '.join(self.gate.failures())}; energy "
                    "trials skipped (gates.measure_rejected_energy = false)")
        return None


def start_policies(cfg: ResidencyConfig, inputs: Inputs, decl: Declaration, say: Progress
                   ) -> dict[str, PolicyState]:
    states: dict[str, PolicyState] = {}
    for spec in inputs.policies:
        state = PolicyState(spec)
        try:
            state.running = start(spec, decl.files)
        except CannotStart as exc:
            state.cannot_start = str(exc)
        if spec.runtime == "onnxruntime" and decl.onnx is not None:
            state.artifact = (ONNX_FILE, decl.onnx.sha256)
        elif spec.runtime == "torch":
            state.artifact = (_rel(decl.trained.model_dir.parent,
                                    decl.trained.prepared.weights_file),
                               decl.revisions.model.removeprefix("sha256:"))
        states[spec.policy_id] = state
        what = (f"could not start: {state.cannot_start}" if state.cannot_start else
                f"FAULT: {state.fault}" if state.fault else
                f"started on {state.running.device if state.running else '?'}")
        say(f"policy {spec.policy_id} ({spec.runtime} {spec.compute_units}, "
            f"{spec.precision}, {spec.role}): {what}")
    for pid, reason in inputs.left_out.items():
        say(f"policy {pid}: left out ({reason})")
    return states


def run_gates(cfg: ResidencyConfig, root: Path, decl: Declaration,
              states: dict[str, PolicyState], say: Progress) -> None:
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
        state.gate = gates.GateResult(pid, len(got), acc or 0.0, agr or 0.0,
                                      cfg.gates.accuracy_floor, cfg.gates.agreement_floor)
        results.append(state.gate)
        say(f"gate {pid}: {state.gate.summary()}: "
            + ("passed" if state.gate.passed else "REJECTED"))
    artifacts.write_json(root / "gates/gates.json", gates.gates_record(
        results, skipped, cfg.gates.accuracy_floor, cfg.gates.agreement_floor,
        decl.reference))


def run_placement(cfg: ResidencyConfig, root: Path, decl: Declaration,
                  states: dict[str, PolicyState], say: Progress) -> None:
    """One diagnostic pass per started policy (faulted ones included: their placement is the
    evidence of the fault)."""
    texts = decl.texts[:cfg.diagnostic_prompts]
    for pid, state in states.items():
        policy = state.running
        if isinstance(policy, TorchPolicy):
            rel = f"placement/{pid}.torch.json"
            record = torch_placement(policy, texts)
        elif isinstance(policy, OrtPolicy) and decl.onnx is not None:
            rel = f"placement/{pid}.ort.json"
            profile = f"placement/{pid}.ort-profile.json"
            record = ort_placement(policy, texts, decl.onnx.file, decl.files.threads,
                                   decl.onnx.sha256, root / profile, profile)
        else:
            continue
        artifacts.write_json(root / rel, record)
        state.placement_file = rel
        state.placement_summary = record["summary"]
        share = record["summary"].get("operation_share")
        say(f"placement {pid}: {rel}, operation share on {policy.device}: "
            + ("-" if share is None else f"{share:.3f}"))


# --- 4. trials ------------------------------------------------------------------------------

def run_trials(cfg: ResidencyConfig, root: Path, decl: Declaration,
               states: dict[str, PolicyState], inst: Instruments, say: Progress
               ) -> list[TrialRun]:
    measure = cfg.gates.measure_rejected_energy
    order = [(pid, n) for pid, n in decl.planned_order
             if states[pid].trial_block(measure) is None]
    step = Steps(say, len(order))
    interval = cfg.energy.minimums.sampling_interval_s
    last = {pid: n for pid, n in order}
    runs: list[TrialRun] = []
    for position, (pid, n) in enumerate(order, 1):
        state = states[pid]
        policy = state.running
        assert policy is not None
        if "before" not in state.idle:
            state.idle["before"] = f"idle/{pid}/before.jsonl"
            measure_idle(inst, cfg.energy.idle_seconds, interval, root / state.idle["before"],
                         f"idle before policy {pid}")
        run = run_trial(policy, n, position, decl.ids, decl.texts, cfg.energy.repetitions,
                        cfg.warmup, inst, interval, root)
        runs.append(run)
        took = "-" if run.wall_seconds is None else f"{run.wall_seconds:.3f} s"
        step(position - 1, f"{pid} trial-{n}: {run.status}, {run.answers} inferences in "
             f"{took}" + (f" ({run.error})" if run.error else ""))
        if last[pid] == n:
            state.idle["after"] = f"idle/{pid}/after.jsonl"
            measure_idle(inst, cfg.energy.idle_seconds, interval, root / state.idle["after"],
                         f"idle after policy {pid}")
    return runs


# --- 5. read back and write -----------------------------------------------------------------

def write(cfg: ResidencyConfig, root: Path, inputs: Inputs, decl: Declaration,
          states: dict[str, PolicyState], runs: list[TrialRun], inst: Instruments,
          gpus: list[dict[str, Any]]) -> dict[str, Any]:
    """Read every trial's files back, write the claims and the rest; return the manifest."""
    env = observe_residency(gpus, decl.revisions.code, decl.load_before)
    artifacts.write_json(root / "environment.json", env)
    by_trial = {(r.policy_id, r.trial_index): r for r in runs}
    mins = cfg.energy.minimums
    trial_rows: list[dict[str, Any]] = []
    policy_rows: list[dict[str, Any]] = []
    figures: dict[str, claims.PolicyFigures] = {}
    answers_of: dict[str, list[tuple[str, str]]] = {}
    for pid, state in states.items():
        idle_w = _idle(root, pid, state, cfg, mins)
        ok: list[claims.TrialFigures] = []
        latencies: list[float] = []
        answers: list[tuple[str, str]] = []
        for n in range(1, cfg.trials_per_policy + 1):
            run = by_trial.get((pid, n))
            if run is None:
                trial_rows.append(_blocked_row(cfg, decl, state, n))
                continue
            outputs = claims.TrialOutputs.read(root / f"outputs/{pid}/trial-{n}.jsonl")
            energy = analyse(_records(root / f"power/{pid}/trial-{n}.jsonl"), mins)
            fig = claims.TrialFigures(len(outputs.ids), claims.nearest_rank(
                outputs.latencies_ms), run.wall_seconds, energy)
            complete = outputs.follows(decl.ids, cfg.energy.repetitions)
            status = run.status if complete or run.status != "ok" else "failed"
            _write_energy(root, pid, n, cfg, fig, idle_w, run.monotonic_seconds)
            trial_rows.append(_trial_row(cfg, decl, state, run, fig, status, complete))
            if status == "ok":
                ok.append(fig)
                latencies += outputs.latencies_ms
                answers += outputs.answers()
        figures[pid] = claims.pool(ok, latencies)
        answers_of[pid] = answers or (claims.read_answers(root / f"gates/{pid}.jsonl")
                                      if (root / f"gates/{pid}.jsonl").is_file() else [])
    baseline = figures.get(cfg.baseline_policy)
    for pid, state in states.items():
        policy_rows.append(_policy_row(cfg, decl, state, figures[pid], baseline,
                                       answers_of[pid], bool(figures[pid].trials)))
    artifacts.write_csv(root / "trials.csv", trial_rows, "trials")
    artifacts.write_csv(root / "policies.csv", policy_rows, "policies")
    return _manifest(cfg, inputs, decl, states, runs, inst, env)


def _records(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _idle(root: Path, pid: str, state: PolicyState, cfg: ResidencyConfig,
          mins: Minimums) -> float | None:
    """Write energy/<pid>/idle.json from the idle traces; return the mean idle power."""
    if not state.idle:
        return None
    parts: dict[str, Any] = {}
    powers = []
    for when, rel in sorted(state.idle.items()):
        result = analyse(_records(root / rel), mins, "idle_start", "idle_end")
        parts[when] = {"trace": rel, **result.to_json()}
        if result.status == "measured" and result.average_power_w is not None:
            powers.append(result.average_power_w)
    mean = sum(powers) / len(powers) if len(powers) == len(parts) and powers else None
    reason = None if mean is not None else "; ".join(
        f"{w}: {p['reason']}" for w, p in parts.items() if p["reason"]) or "not measured"
    artifacts.write_json(root / f"energy/{pid}/idle.json", {
        "format": "idle-power/1", "policy_id": pid, "seconds_declared": cfg.energy.idle_seconds,
        "before": parts.get("before"), "after": parts.get("after"),
        "average_power_w": mean, "status": "measured" if mean is not None else "not_measured",
        "reason": reason})
    return mean


def _write_energy(root: Path, pid: str, n: int, cfg: ResidencyConfig,
                  fig: claims.TrialFigures, idle_w: float | None,
                  monotonic: float | None) -> None:
    e = fig.energy
    assert e is not None
    net = (e.energy_j - idle_w * e.window_seconds
           if fig.measured and idle_w is not None and e.energy_j is not None
           and e.window_seconds is not None else None)
    artifacts.write_json(root / f"energy/{pid}/trial-{n}.json", {
        "format": "energy-window/1", "policy_id": pid, "trial_index": n,
        "power_trace": f"power/{pid}/trial-{n}.jsonl",
        "outputs_file": f"outputs/{pid}/trial-{n}.jsonl",
        "repetitions": cfg.energy.repetitions, "inferences": fig.inferences,
        "minimums": cfg.energy.minimums.to_json(), **e.to_json(),
        "window_monotonic_seconds": monotonic,
        "joules_per_inference": fig.joules_per_inference,
        "idle_average_power_w": idle_w, "net_energy_j": net,
        "net_joules_per_inference": net / fig.inferences if net is not None
        and fig.inferences else None})


def _energy_note(e: Analysis, mins: Minimums) -> str:
    counts = ", ".join(f"{s.source} {s.domain} {s.device} {s.kind}s {s.readings}"
                       + (f" ({s.updates} updates)" if s.kind == "counter" else "")
                       for s in e.series) or "no readings"
    window = ("window not recorded" if e.window_seconds is None else
              f"window {e.window_seconds:.3f} s (declared minimum {mins.window_seconds:.3f} s, "
              f"{mins.counter_updates} counter updates)")
    if e.status == "measured":
        return f"energy from {e.energy_source}: {window}; readings in window: {counts}"
    if e.status == "below_resolution":
        return f"energy below resolution: {e.reason}; {window}; readings in window: {counts}"
    return f"energy not measured: {e.reason}; {window}"


def _trial_row(cfg: ResidencyConfig, decl: Declaration, state: PolicyState, run: TrialRun,
               fig: claims.TrialFigures, status: str, complete: bool) -> dict[str, Any]:
    e = fig.energy
    assert e is not None
    notes = [f"{cfg.energy.repetitions} repetition(s) of the {len(decl.ids)}-prompt sequence "
             "in the window", _energy_note(e, cfg.energy.minimums)]
    if run.error:
        notes.insert(0, f"FAILED: {run.error} ({fig.inferences} answers before it are kept)")
    elif not complete:
        notes.insert(0, "FAILED: the outputs file does not hold the sequence repeated in "
                        "order")
    notes += [run.power_source.note("power source"), run.power_mode.note("power mode")]
    return {**_row_head(cfg, decl, state, run.trial_index),
            "order_position": run.order_position, "warmup_iterations": run.warmup,
            "inferences": fig.inferences, "started_at": run.started_at,
            "ended_at": run.ended_at, "wall_seconds": run.wall_seconds,
            "p95_latency_ms": fig.p95_ms,
            "average_power_w": e.average_power_w if fig.measured else None,
            "energy_j": e.energy_j if fig.measured else None,
            "joules_per_inference": fig.joules_per_inference,
            "power_source": run.power_source.value, "power_mode": run.power_mode.value,
            "energy_source": e.energy_source if fig.measured else None,
            "status": status, "notes": "; ".join(notes)}


def _blocked_row(cfg: ResidencyConfig, decl: Declaration, state: PolicyState,
                 n: int) -> dict[str, Any]:
    reason = state.trial_block(cfg.gates.measure_rejected_energy) or "not run"
    skipped = state.cannot_start is None and state.fault is None
    return {**_row_head(cfg, decl, state, n), "status": "skipped" if skipped else "failed",
            "notes": reason}


def _row_head(cfg: ResidencyConfig, decl: Declaration, state: PolicyState,
              n: int) -> dict[str, Any]:
    return {"experiment_id": cfg.experiment_id, "policy_id": state.spec.policy_id,
            "role": state.spec.role, "trial_index": n,
            "prompt_sequence_sha256": decl.sequence_sha256}


def _policy_row(cfg: ResidencyConfig, decl: Declaration, state: PolicyState,
                fig: claims.PolicyFigures, baseline: claims.PolicyFigures | None,
                answers: list[tuple[str, str]], from_trials: bool) -> dict[str, Any]:
    spec = state.spec
    accuracy, agreement = claims.accuracy_agreement(answers, decl.references,
                                                    decl.reference_outputs)
    accelerator = spec.role == "accelerator"
    share = state.placement_summary.get("operation_share") if accelerator else None
    verdict, why = _verdict(cfg, state, fig, baseline, share)
    notes = [why, fig.energy_note]
    if answers:
        notes.append("accuracy and agreement over every answer of the ok trials" if from_trials
                     else f"accuracy and agreement over the gate pass (gates/{spec.policy_id}"
                          ".jsonl)")
    if state.gate is not None:
        notes.append(f"gate: {state.gate.summary()}")
    if state.placement_file:
        notes.append(f"placement evidence {state.placement_file}")
    if state.fault:
        notes.append(f"active providers {state.running.active if state.running else []}")
    return {"experiment_id": cfg.experiment_id, "policy_id": spec.policy_id,
            "role": spec.role, "runtime": spec.runtime, "compute_units": spec.compute_units,
            "model_tier": cfg.model_tier, "trials": fig.trials,
            "median_wall_seconds": fig.median_wall_seconds, "p95_latency_ms": fig.p95_ms,
            "average_power_w": fig.average_power_w,
            "joules_per_inference": fig.joules_per_inference, "accuracy": accuracy,
            "agreement": agreement, "operation_share": share,
            "operation_share_floor": cfg.operation_share_floor if accelerator else None,
            "estimated_cost_share": None, "verdict": verdict, "notes": "; ".join(notes)}


def _verdict(cfg: ResidencyConfig, state: PolicyState, fig: claims.PolicyFigures,
             baseline: claims.PolicyFigures | None, share: float | None) -> tuple[str, str]:
    """B4, B7, B8 in order; the first reason to reject is the one given."""
    spec = state.spec
    if spec.policy_id == cfg.baseline_policy:
        block = state.trial_block(cfg.gates.measure_rejected_energy)
        return "baseline", ("the cpu-only baseline every accelerator policy is compared with "
                            "(B7)" + ("" if block is None else
                                      f"; it has no trial: {block}; no accelerator policy can "
                                      "be shown better than it"))
    block = state.trial_block(measure_rejected=False)
    if block is not None:
        return "rejected", block
    if fig.trials == 0:
        return "rejected", "no ok trial"
    if spec.role == "cpu-only":
        if cfg.model_tier == "deep":
            return "rejected", "bare CPU is valid only for a lite model (B5)"
        return "accepted", ("gates passed and every trial ok; a cpu-only runtime beside the "
                            "baseline (B7 compares accelerator policies only)")
    if share is None:
        return "rejected", "no placement evidence of where the operations ran (B4)"
    if share < cfg.operation_share_floor:
        return "rejected", (f"operation share {share:.3f} below the floor "
                            f"{cfg.operation_share_floor}: a residency failure (B4, B7)")
    if baseline is None or baseline.average_power_w is None or fig.average_power_w is None:
        return "rejected", ("B7 not shown: average power and joules per inference of this "
                            "policy and of the baseline are not both measured")
    assert baseline.joules_per_inference is not None and fig.joules_per_inference is not None
    if (fig.average_power_w < baseline.average_power_w
            and fig.joules_per_inference < baseline.joules_per_inference):
        return "accepted", "less average power and fewer joules per inference than the baseline"
    return "rejected", ("not both less average power and fewer joules per inference than the "
                        "cpu-only baseline (B7)")


def _gpus_used(states: dict[str, PolicyState]) -> list[dict[str, Any]]:
    """The GPUs of the run's torch CUDA policies (NVML reads these for every policy)."""
    import torch

    indices = sorted({torch.device(s.running.device).index or 0 for s in states.values()
                      if isinstance(s.running, TorchPolicy)
                      and s.running.device.startswith("cuda")})
    if not indices and any(isinstance(s.running, OrtPolicy) and s.fault is None
                           and s.spec.compute_units != "CPUExecutionProvider"
                           for s in states.values()) and torch.cuda.is_available():
        indices = [0]  # ORT's CUDA and TensorRT providers use device 0 by default
    return [gpu_identity(i, torch.cuda) for i in indices]


def _manifest(cfg: ResidencyConfig, inputs: Inputs, decl: Declaration,
              states: dict[str, PolicyState], runs: list[TrialRun], inst: Instruments,
              env: dict[str, Any]) -> dict[str, Any]:
    planned = cfg.trials_per_policy * len(states)
    return {
        **Header(PROTOCOL, cfg.experiment_id, True, decl.declared_at, cfg.source).to_json(),
        "config_file": CONFIG_COPY,
        "model_tier": cfg.model_tier,
        "artifact_sha256": decl.revisions.model.removeprefix("sha256:"),
        "artifact": {"file": _rel(decl.trained.model_dir.parent,
                                  decl.trained.prepared.weights_file),
                     "description": decl.trained.prepared.description,
                     "note": "the trained float32 model every policy derives from; each "
                             "policy names the artifact it runs (policies[].artifact_file)"},
        "onnx_export": decl.onnx.to_json(ONNX_FILE) if decl.onnx else None,
        "revisions": decl.revisions.to_json(),
        "seed": cfg.seed,
        "task": {"classes": list(decl.classes),
                 "output_format": {"type": "jsonl",
                                   "required_fields": ["id", "label", "latency_ms"],
                                   "label_values": "one of task.classes"}},
        "prompt_sequence": {"file": SEQUENCE_FILE, "sha256": decl.sequence_sha256,
                            "prompts": len(decl.ids), "corpus_source": inputs.corpus.source,
                            "corpus_revision": inputs.corpus.revision},
        "reference": {"file": REFERENCE_FILE, **decl.reference},
        "workload": {"name": inputs.factory.name, "callable": cfg.workload_callable,
                     "options": cfg.workload_options, "context": cfg.context,
                     "description": decl.trained.prepared.description,
                     "train_seconds": decl.trained.train_seconds,
                     "threads": inputs.threads},
        "baseline_policy": cfg.baseline_policy,
        "policies": [_policy_entry(s) for s in states.values()],
        "policies_left_out": [{"policy_id": pid, "reason": reason,
                               **{k: v for k, v in next(
                                   p for p in cfg.policies if p.policy_id == pid
                               ).to_json().items() if k != "policy_id"}}
                              for pid, reason in inputs.left_out.items()],
        "trials_per_policy": cfg.trials_per_policy,
        "planned_trials": planned,
        "warmup_iterations": cfg.warmup,
        "trial_order": [[r.policy_id, r.trial_index] for r in runs],
        "trial_order_drawn": [[pid, n] for pid, n in decl.planned_order],
        "trial_order_method": TRIAL_ORDER_METHOD,
        "timer_scope": "each latency_ms is one batch-one classification: tokenization, the "
                       "model and the label, nothing else; wall_seconds is the whole window "
                       "(every repetition), between the window markers",
        "energy": {"repetitions": cfg.energy.repetitions,
                   "inferences_per_trial": cfg.energy.repetitions * len(decl.ids),
                   "minimums": cfg.energy.minimums.to_json(),
                   "idle_seconds": cfg.energy.idle_seconds,
                   "instruments": inst.describe(),
                   "measured": bool(inst.usable),
                   "not_measured_reason": None if inst.usable else inst.reason},
        "gates": {"accuracy_floor": cfg.gates.accuracy_floor,
                  "agreement_floor": cfg.gates.agreement_floor,
                  "measure_rejected_energy": cfg.gates.measure_rejected_energy,
                  "file": "gates/gates.json"},
        "placement": {"diagnostic_prompts": cfg.diagnostic_prompts,
                      "operation_share_floor": cfg.operation_share_floor},
        "environment_file": "environment.json",
        "power_source": env["power_source"],
        "power_mode": env["power_mode"],
        "local_utc_offset": time.strftime("%z")[:3] + ":" + time.strftime("%z")[3:],
        "notes": cfg.notes,
    }


def _policy_entry(state: PolicyState) -> dict[str, Any]:
    spec, running = state.spec, state.running
    status = ("cannot_start" if state.cannot_start else "fault" if state.fault else
              "rejected_at_gate" if state.gate is not None and not state.gate.passed
              else "ran")
    entry: dict[str, Any] = {
        "policy_id": spec.policy_id, "role": spec.role, "runtime": spec.runtime,
        "compute_units": spec.compute_units, "precision": spec.precision, "when": spec.when,
        "status": status,
        "reason": state.cannot_start or state.fault or (
            "; ".join(state.gate.failures()) if state.gate and not state.gate.passed
            else None),
        "device": running.device if running else None,
        "artifact_file": state.artifact[0] if state.artifact else None,
        "artifact_sha256": state.artifact[1] if state.artifact else None,
        "placement_file": state.placement_file,
        "idle_files": dict(state.idle),
        "notes": spec.notes,
    }
    if spec.runtime == "onnxruntime":
        entry["requested_providers"] = requested_providers(spec)
        entry["active_providers"] = running.active if running else None
    return entry

