"""`runner residency`: protocol B from configuration to a complete run directory.

Stages, in this order, so that nothing measured can influence what was declared:
1. `check_inputs`: config, workload, corpus, the reference answers file if one is named, and
   which policies this machine can run (a `when = "available"` policy it cannot is left out,
   with the reason); any fault stops here with exit 2 and nothing written;
2. `declare`: stage the prompt sequence, references and config copy, train the model, compute
   (or copy) the reference artifact's answers, export the ONNX artifact (the ONNX Runtime
   policies run it and `audit replay` re-runs it; a failed export stops the run only when an
   ONNX Runtime policy is declared), draw the trial order from the seed, note the
   declaration time;
3. `start_policies` (runner.b.pretrial, with the Core ML packages converted first):
   sessions and devices; a policy that cannot start, or whose runtime runs something else
   than asked (ONNX Runtime's silent CPU fallback), is recorded as such;
4. `run_gates` (B8) and `run_placement` (B4, B5), runner.b.pretrial: outside the timed
   trials;
5. `run_trials`: idle power before each policy's first trial and after its last, the trials
   in the drawn order for the policies that passed their gates;
6. `readback.write`: read every output and power trace back to compute the claims, write
   trials.csv, policies.csv, the energy summaries and environment, and build the manifest;
   `StagedRunDir.publish` validates all of it against the schemas, writes the manifest last
   and renames the directory into place.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from runner import artifacts, loadwatch
from runner.b import coreml, gates, power_source, readback, winml
from runner.b.config import PolicySpec, ResidencyConfig, protocol_breaks
from runner.b.energy.base import Instrument
from runner.b.layout import (
    CONFIG_COPY,
    LAYOUT,
    REFERENCE_FILE,
    SEQUENCE_FILE,
    rel_path,
)
from runner.b.policies import ModelFiles, availability, start
from runner.b.power_state import gather
from runner.b.pretrial import coreml_packages, gpus_used, run_gates, run_placement, start_policies
from runner.b.state import Declaration, Inputs, PolicyState
from runner.b.trials import (
    Instruments,
    TrialRun,
    default_instruments,
    external_log,
    measure_idle,
    open_instruments,
    run_trial,
)
from runner.config import recorded_options, resolve_options
from runner.conformance import enforce
from runner.corpus import load_corpus
from runner.environment import loadavg
from runner.errors import RunnerError
from runner.manifest import Revisions
from runner.model import run_threads, train
from runner.onnx_export import ONNX_FILE
from runner.order import alternating_rounds
from runner.records import now_iso
from runner.replay import archive
from runner.revisions import code_revision, file_sha256
from runner.rundir import Progress, StagedRunDir, Steps, refuse_existing
from runner.workloads import resolve

__all__ = ["LAYOUT", "check_inputs", "declare", "residency", "run_trials"]


# --- 1. inputs ------------------------------------------------------------------------------


def check_inputs(cfg: ResidencyConfig, out: Path) -> Inputs:
    refuse_existing(out)
    factory = resolve(cfg.workload_callable)
    options = resolve_options(cfg.workload_options, factory.path_options, cfg.base_dir)
    factory.check(options)
    torch_policies = [p.policy_id for p in cfg.policies if p.runtime == "torch"]
    if torch_policies and not factory.runs_in_torch(options):
        raise RunnerError(
            f"workload {cfg.workload_callable} with these options has no torch "
            f"model (an ONNX file alone), so the torch policies {torch_policies} "
            "cannot run: declare ONNX Runtime policies only, or give the "
            "checkpoint too"
        )
    corpus = load_corpus(cfg.corpus_path, cfg.eval_size, cfg.max_texts, cfg.seed)
    ev = corpus.split("eval")
    off_protocol = enforce(
        protocol_breaks(cfg, ev.height), cfg.off_protocol, "protocol B", cfg.source
    )
    factory.check_corpus(options, corpus.classes, cfg.context)
    reference = None
    if cfg.gates.reference_outputs is not None:
        reference = gates.read_reference_outputs(
            cfg.gates.reference_outputs, ev["id"].to_list(), corpus.classes
        )
    plugins = (
        winml.register_plugins(dict(cfg.plugin_libraries))
        if any(p.runtime == winml.RUNTIME for p in cfg.policies)
        else []
    )
    left_out: dict[str, str] = {}
    run: list[PolicySpec] = []
    source = power_source.read()[0].value if any(p.ac_only for p in cfg.policies) else None
    for spec in cfg.policies:
        reason = _availability(spec) if spec.when == "available" else None
        if reason is None and spec.ac_only and source == "battery":
            reason = (
                "the machine is on battery: the ladder's AC-only rung (a discrete GPU, "
                "Core ML's all) is skipped when unplugged (B9)"
            )
        if reason is None:
            run.append(spec)
        else:
            left_out[spec.policy_id] = reason
    threads = run_threads(
        factory, cfg.threads, onnxruntime=any(p.runtime == "onnxruntime" for p in run)
    )
    return Inputs(
        factory,
        corpus,
        threads,
        tuple(run),
        left_out,
        reference,
        options,
        recorded_options(cfg.workload_options, factory.path_options),
        off_protocol,
        plugins,
    )


def _availability(spec: PolicySpec) -> str | None:
    if spec.runtime == winml.RUNTIME:
        return winml.availability(spec)
    if spec.runtime == "coreml":
        return coreml.availability(spec)
    return availability(spec)


def residency(
    cfg: ResidencyConfig,
    out: Path,
    progress: Progress | None = None,
    *,
    instruments: list[Instrument] | None = None,
) -> Path:
    """Run protocol B as `cfg` says and write the complete run directory at `out`.
    `instruments` replaces the configured NVML/RAPL readers (tests hand in fakes)."""
    say = progress or (lambda _msg: None)
    inputs = check_inputs(cfg, out)
    # the workload's file options as resolved against the config file's folder, everywhere
    cfg = replace(cfg, workload_options=inputs.options)
    if inputs.off_protocol is not None:
        say(
            "OFF PROTOCOL: a diagnostic run (--off-protocol)"
            + "".join(f"; {b['message']}" for b in inputs.off_protocol["breaks"])
        )
    staged = StagedRunDir.create(out, say)
    with staged.unfinished():
        root = staged.root
        # an external power log is checked first: a wrong interval or column stops the run
        # before any training, and a capture the runner starts runs from here on
        external = external_log(cfg.energy, root)
        try:
            if external is not None:
                say("energy: " + external.check())
            decl = declare(cfg, root, inputs, say)
            packages = coreml_packages(cfg, root, inputs, decl, say)
            states = start_policies(cfg, inputs, decl, say, root, packages or [])
            run_gates(cfg, root, decl, states, say)
            run_placement(cfg, root, decl, states, say)
        except BaseException:
            if external is not None:  # a powermetrics the runner started stops with it
                external.close()
            raise
        gpus = gpus_used(states)
        inst = (
            Instruments([], [], external)
            if external is not None
            else open_instruments(
                instruments
                if instruments is not None
                else default_instruments(
                    cfg.energy.instruments,
                    [(g["index"], g["uuid"]) for g in gpus],
                    cfg.energy.powercap_root,
                    cfg.energy.minimums.max_watts,
                )
            )
        )
        try:
            if external is None:
                say(
                    "energy: "
                    + (", ".join(i.source for i in inst.usable) or "not measured")
                    + (f" ({inst.reason})" if inst.missing else "")
                )
            probe = loadwatch.before()
            say(loadwatch.sentence(probe, "before measuring"))
            with loadwatch.LoadWatch() as watch:
                runs = run_trials(cfg, root, decl, states, inst, say, watch)
            load = {"before": probe, "while_measuring": watch.record()}
            say(loadwatch.sentence(load["while_measuring"]))
            for state in states.values():
                if state.running is not None:
                    state.running.close()
            power_state = gather(cfg, root, inputs, decl, states, inst, say)
        finally:
            inst.close()
        manifest = readback.write(
            cfg, root, inputs, decl, states, runs, inst, gpus, power_state, load
        )
        if packages is not None:
            manifest["coreml_packages"] = packages
        staged.publish(manifest, LAYOUT, "manifest_residency")
    ok = sum(1 for r in runs if r.status == "ok")
    say(f"done: {out} ({ok}/{len(runs)} trials ok)")
    return out


# --- 2. the declaration ---------------------------------------------------------------------


def declare(cfg: ResidencyConfig, root: Path, inputs: Inputs, say: Progress) -> Declaration:
    corpus = inputs.corpus
    ev = corpus.split("eval")
    ids, texts = ev["id"].to_list(), ev["text"].to_list()
    artifacts.write_jsonl(root / SEQUENCE_FILE, ev.select("id", "text").to_dicts())
    artifacts.write_jsonl(root / "corpus/references.jsonl", ev.select("id", "label").to_dicts())
    (root / CONFIG_COPY).parent.mkdir(parents=True, exist_ok=True)
    (root / CONFIG_COPY).write_text(cfg.text, encoding="utf-8")
    say(
        f"corpus: {corpus.split('train').height} train texts, a fixed sequence of {len(ids)} "
        f"prompts, {len(corpus.classes)} classes; "
        f"{inputs.factory.preparing()}"
    )
    trained = train(
        inputs.factory, corpus, root / "model", cfg.seed, cfg.context, cfg.workload_options
    )
    workload = inputs.factory.load(
        trained.model_dir, "cpu", "float32", cfg.context, cfg.workload_options
    )
    weights_sha = file_sha256(trained.prepared.weights_file)
    reference: dict[str, str | None]
    if inputs.reference_answers is None:
        answers = gates.classify_sequence(lambda t: workload.classify([t], 1)[0], ids, texts)
        runtime = "torch" if inputs.factory.runs_in_torch(cfg.workload_options) else "ONNX Runtime"
        reference = {
            "artifact": f"the workload's {runtime} float32 answers on the CPU, batch "
            "one, computed before the trials",
            "artifact_file": rel_path(root, trained.prepared.weights_file),
            "artifact_sha256": weights_sha,
        }
    else:
        answers = inputs.reference_answers
        assert cfg.gates.reference_outputs is not None
        reference = {
            "artifact": f"accepted reference answers from {cfg.gates.reference_outputs}",
            "artifact_file": None,
            "artifact_sha256": file_sha256(cfg.gates.reference_outputs),
        }
    artifacts.write_jsonl(root / REFERENCE_FILE, answers)
    form = workload.tensor_form()
    archived = archive(
        form,
        workload=cfg.workload_callable,
        options=cfg.workload_options,
        root=root,
        model_dir=trained.model_dir,
        tokenizer_file=trained.prepared.tokenizer_file,
        context=cfg.context,
        inputs_file=SEQUENCE_FILE,
        model_revision="sha256:" + weights_sha,
        required=any(p.runtime in ("onnxruntime", winml.RUNTIME, "coreml") for p in cfg.policies),
    )
    onnx = archived.onnx
    if onnx is not None:
        say(f"onnx: {ONNX_FILE} exported in {onnx.seconds:.1f} s, sha256 {onnx.sha256[:16]}...")
    else:
        say(f"onnx: not exported ({archived.manifest['replay_unavailable']})")
    files = ModelFiles(
        inputs.factory,
        trained.model_dir,
        cfg.context,
        cfg.workload_options,
        onnx.file if onnx else None,
        form if onnx else None,
        inputs.threads.onnxruntime or inputs.threads.torch,
    )
    if (
        onnx is not None
        and inputs.reference_answers is None
        and any(p.runtime == "coreml" for p in inputs.policies)
    ):
        # B5: a Core ML evaluation is valid only against the accepted ONNX model
        answers, reference = _onnx_reference(files, ids, texts, root, onnx.sha256)
        artifacts.write_jsonl(root / REFERENCE_FILE, answers)
    rounds = alternating_rounds(
        [p.policy_id for p in inputs.policies], cfg.trials_per_policy, random.Random(cfg.seed)
    )
    return Declaration(
        ids=ids,
        texts=texts,
        classes=corpus.classes,
        references=dict(zip(ids, ev["label"].to_list(), strict=True)),
        reference_outputs={a["id"]: a["label"] for a in answers},
        reference=reference,
        sequence_sha256=file_sha256(root / SEQUENCE_FILE),
        trained=trained,
        files=files,
        onnx=onnx,
        revisions=Revisions(
            corpus=corpus.revision,
            model="sha256:" + weights_sha,
            tokenizer="sha256:" + file_sha256(trained.prepared.tokenizer_file),
            code=code_revision(),
        ),
        planned_order=rounds,
        declared_at=now_iso(),
        load_before=loadavg(),
        replay=archived.manifest,
    )


def _onnx_reference(
    files: ModelFiles, ids: list[str], texts: list[str], root: Path, sha256: str
) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """The ONNX export's answers (ONNX Runtime, CPU, batch one): the accepted model a Core ML
    package is compared with."""
    spec = PolicySpec(
        "reference", "onnxruntime", "CPUExecutionProvider", "cpu-only", "float32", "always"
    )
    ort_policy = start(spec, files)
    try:
        answers = gates.classify_sequence(ort_policy.classify_one, ids, texts)
    finally:
        ort_policy.close()
    return answers, {
        "artifact": "the accepted ONNX model (model/model.onnx) in ONNX Runtime "
        "on the CPU, batch one, computed before the trials",
        "artifact_file": ONNX_FILE,
        "artifact_sha256": sha256,
    }


# --- 5. trials (stages 3 and 4 are runner.b.pretrial) ---------------------------------------


def run_trials(
    cfg: ResidencyConfig,
    root: Path,
    decl: Declaration,
    states: dict[str, PolicyState],
    inst: Instruments,
    say: Progress,
    watch: loadwatch.LoadWatch | None = None,
) -> list[TrialRun]:
    measure = cfg.gates.measure_rejected_energy
    running = [
        pid
        for pid in dict.fromkeys(pid for pid, _ in decl.planned_order)
        if states[pid].trial_block(measure) is None
    ]
    order = decl.planned_order
    if len(running) < len(states):  # dropping policies could put one twice in a row (B3)
        order = alternating_rounds(running, cfg.trials_per_policy, random.Random(cfg.seed))
    step = Steps(say, len(order), watch, [pid for pid, _ in order])
    interval = cfg.energy.minimums.sampling_interval_s
    last = {pid: n for pid, n in order}
    runs: list[TrialRun] = []
    for position, (pid, n) in enumerate(order, 1):
        state = states[pid]
        policy = state.running
        assert policy is not None
        if "before" not in state.idle:
            _idle(cfg, root, inst, state, "before")
        run = run_trial(
            policy,
            n,
            position,
            decl.ids,
            decl.texts,
            cfg.energy.repetitions,
            cfg.warmup,
            inst,
            interval,
            root,
        )
        runs.append(run)
        took = "-" if run.wall_seconds is None else f"{run.wall_seconds:.3f} s"
        step(
            position - 1,
            f"{pid} trial-{n}: {run.status}, {run.answers} inferences in "
            f"{took}" + (f" ({run.error})" if run.error else ""),
        )
        if last[pid] == n:
            _idle(cfg, root, inst, state, "after")
    return runs


def _idle(
    cfg: ResidencyConfig, root: Path, inst: Instruments, state: PolicyState, when: str
) -> None:
    pid = state.spec.policy_id
    state.idle[when] = f"idle/{pid}/{when}{inst.extension}"
    window = measure_idle(
        inst,
        cfg.energy.idle_seconds,
        cfg.energy.minimums.sampling_interval_s,
        root / state.idle[when],
        f"idle {when} policy {pid}",
    )
    if window is not None:
        state.idle_windows[when] = window
