"""`runner execute`: protocol A from configuration to a complete run directory.

Four stages, in this order, so that nothing measured can influence what was declared:
1. `check_inputs`: every input (config, offers, device, workload, corpus); any fault stops
   here with exit 2 and nothing written;
2. `declare`: stage the corpus files and train/stage the model under
   `<RUN_DIR>.partial-<pid>/`, archive it as ONNX for `audit replay` (`runner.replay`), fix
   the quality rule from the tune split, count truncation, draw the pass order from the seed,
   note the declaration time;
3. `run_passes`: cold passes, each in a fresh process; then in this process one warm-up
   block per variant and the warm passes in seeded, alternating rounds;
4. `read_back` every output file for the set check and quality (A2), then `write` the CSV,
   timeline, environment, set check and economics, and the manifest from its typed pieces
   (both in `runner.a.write`);
   `StagedRunDir.publish` validates all of it, writes the manifest last and renames the
   directory into place.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from runner import artifacts, loadwatch
from runner.a.config import RunConfig, protocol_breaks
from runner.a.economics import ChosenOffer, choose_offer
from runner.a.passes import INPUTS_FILE, PassSpec, run_pass, run_warmup
from runner.a.setcheck import accepted, quality
from runner.a.write import TIMER_SCOPES, read_back, write
from runner.config import recorded_options, resolve_options
from runner.conformance import enforce
from runner.corpus import Corpus, load_corpus
from runner.errors import RunnerError
from runner.manifest import Revisions
from runner.model import Threads, TrainedModel, child_env, resolve_device, run_threads, train
from runner.order import alternating_rounds
from runner.records import now_iso
from runner.replay import archive
from runner.revisions import code_revision, model_revisions, write_recipe
from runner.rundir import Progress, StagedRunDir, Steps, refuse_existing
from runner.workloads import WorkloadFactory, resolve
from runner.workloads.base import Workload

# kept importable from here: tests and older callers use runner.a.execute's names
__all__ = ["TIMER_SCOPES", "draw_pass_order", "execute", "resolve_device"]


def draw_pass_order(variants: list[str], warm_passes: int, seed: int) -> list[dict[str, Any]]:
    """A6.2, drawn before measuring: the cold passes in a seeded permutation, one warm-up block
    per variant (seeded permutation), then `warm_passes` rounds, each a seeded permutation of
    the variants, redrawn when it would start with the variant that ended the round before
    (so the order alternates)."""
    rng = random.Random(seed)
    order: list[tuple[str, str, int]] = []
    order += [(v, "cold", 1) for v in rng.sample(variants, len(variants))]
    order += [(v, "warmup", 1) for v in rng.sample(variants, len(variants))]
    order += [(v, "warm", r) for v, r in alternating_rounds(variants, warm_passes, rng)]
    return [
        {"order_index": i, "variant_id": v, "phase": p, "run_index": n}
        for i, (v, p, n) in enumerate(order)
    ]


# --- 1. inputs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Inputs:
    """Everything checked before anything is measured or written."""

    offer: ChosenOffer | None
    device: str
    factory: WorkloadFactory
    corpus: Corpus
    threads: Threads
    options: dict[str, Any]
    """The workload options, file options resolved (`WorkloadFactory.path_options`)."""
    recorded_options: dict[str, Any]
    """The same as the run records them (`runner.config.recorded_options`)."""
    off_protocol: dict[str, Any] | None = None
    """The manifest's record of a diagnostic run (`runner.conformance.enforce`)."""


def check_inputs(cfg: RunConfig, out: Path) -> Inputs:
    refuse_existing(out)
    off_protocol = enforce(protocol_breaks(cfg), cfg.off_protocol, "protocol A", cfg.source)
    offer = (
        choose_offer(cfg.economics.offers_file, cfg.economics.offer_id, cfg.economics.lots)
        if cfg.economics
        else None
    )
    device = resolve_device(cfg.device)
    factory = resolve(cfg.workload_callable)
    options = resolve_options(cfg.workload_options, factory.path_options, cfg.base_dir)
    factory.check(options)
    if not factory.runs_in_torch(options):
        raise RunnerError(
            f"workload {cfg.workload_callable} with these options has no torch "
            "model: protocol A runs the model in torch (a checkpoint, not an "
            "ONNX file alone)"
        )
    corpus = load_corpus(cfg.corpus_path, cfg.eval_size, cfg.max_texts, cfg.seed)
    factory.check_corpus(options, corpus.classes, cfg.context)
    return Inputs(
        offer,
        device,
        factory,
        corpus,
        run_threads(factory, cfg.threads),
        options,
        recorded_options(cfg.workload_options, factory.path_options),
        off_protocol,
    )


def execute(cfg: RunConfig, out: Path, progress: Progress | None = None) -> Path:
    """Run protocol A as `cfg` says and write the complete run directory at `out`."""
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
        decl = declare(cfg, staged.root, inputs, say)
        passes = run_passes(cfg, staged.root, inputs, decl, say)
        checks = read_back(cfg, staged.root, decl, passes)
        manifest = write(cfg, staged.root, inputs, decl, passes, checks)
        staged.publish(manifest, artifacts.PROTOCOL_A, "manifest")
    ok = sum(c["corpus_accepted"] for c in checks)
    say(f"done: {out} ({ok}/{len(checks)} passes accepted)")
    return out


# --- 2. the declaration ---------------------------------------------------------------------


@dataclass(frozen=True)
class QualityRule:
    """A1.1: the acceptance rule, fixed from the tune split before any measurement."""

    metric: str
    threshold: float
    tolerance: float
    reference: float
    tune_size: int
    fixed_from: str

    @classmethod
    def fix(cls, cfg: RunConfig, reference: float, tune_size: int) -> QualityRule:
        if cfg.threshold == "from_tune":
            # rounded down, so the binding condition stays value >= reference - tolerance
            threshold = max(0.0, math.floor((reference - cfg.tolerance) * 10_000) / 10_000)
            fixed_from = (
                f"reference = the trained model's {cfg.metric} on the tune split "
                f"({tune_size} texts), computed before any measurement; threshold = "
                "reference - tolerance, rounded down to 4 decimals"
            )
        else:
            threshold = float(cfg.threshold)
            fixed_from = (
                f"threshold from the config ({cfg.source}); reference = the trained "
                f"model's {cfg.metric} on the tune split, computed before measuring"
            )
        return cls(cfg.metric, threshold, cfg.tolerance, reference, tune_size, fixed_from)

    def accepts(self, value: float | None) -> bool:
        return accepted(value, self.threshold, self.reference, self.tolerance)

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "threshold": self.threshold,
            "tolerance": self.tolerance,
            "tolerance_direction": "max_decrease",
            "reference": {
                "name": f"trained model, {self.metric} on the tune split",
                "value": self.reference,
                "source": f"tune split ({self.tune_size} texts), before "
                "measuring; never the evaluation outputs",
            },
            "fixed_from": self.fixed_from,
            "acceptance": "ids_match and format_valid and value >= threshold "
            "and value >= reference.value - tolerance",
        }


@dataclass(frozen=True)
class Declaration:
    """What is fixed and staged before the first pass."""

    eval_ids: list[str]
    eval_texts: list[str]
    classes: tuple[str, ...]
    references: pl.DataFrame
    split_sizes: dict[str, int]
    trained: TrainedModel
    workload: Workload
    main_load_seconds: float
    rule: QualityRule
    truncated: int
    batch_of: dict[str, int]
    order: list[dict[str, Any]]
    revisions: Revisions
    declared_at: str
    load_before: list[float] | None
    load_probe: dict[str, Any]
    """The machine's load just before the passes (`runner.loadwatch.before`)."""
    replay: dict[str, Any]
    """The manifest's `replay` section, or `replay_unavailable` (runner.replay)."""

    @property
    def variants(self) -> list[str]:
        return list(self.batch_of)


def declare(cfg: RunConfig, root: Path, inputs: Inputs, say: Progress) -> Declaration:
    corpus = inputs.corpus
    ev, tr, tu = corpus.split("eval"), corpus.split("train"), corpus.split("tune")
    eval_ids = ev["id"].to_list()
    eval_texts = ev["text"].to_list()
    artifacts.write_lines(root / "corpus/expected_ids.txt", eval_ids)
    artifacts.write_jsonl(root / "corpus/references.jsonl", ev.select("id", "label").to_dicts())
    artifacts.write_lines(root / "corpus/splits/train_ids.txt", tr["id"].to_list())
    artifacts.write_lines(root / "corpus/splits/tune_ids.txt", tu["id"].to_list())
    artifacts.write_jsonl(root / INPUTS_FILE, ev.select("id", "text").to_dicts())
    say(
        f"corpus: {tr.height} train, {tu.height} tune, {ev.height} eval texts, "
        f"{len(corpus.classes)} classes; "
        f"{inputs.factory.preparing()}"
    )
    trained = train(
        inputs.factory, corpus, root / "model", cfg.seed, cfg.context, cfg.workload_options
    )
    code = code_revision()
    t = time.perf_counter()
    workload = inputs.factory.load(
        trained.model_dir, inputs.device, cfg.precision, cfg.context, cfg.workload_options
    )
    main_load_seconds = time.perf_counter() - t
    if inputs.factory.trains_at_run_time:
        write_recipe(
            root,
            trained.model_dir,
            code=code,
            seed=cfg.seed,
            workload=cfg.workload_callable,
            options=cfg.workload_options,
            context=cfg.context,
            corpus=corpus.revision,
        )
    pinned = model_revisions(trained.model_dir)
    model_revision = pinned["model"]
    archived = archive(
        workload.tensor_form(),
        workload=cfg.workload_callable,
        options=cfg.workload_options,
        root=root,
        model_dir=trained.model_dir,
        tokenizer_file=trained.prepared.tokenizer_file,
        context=cfg.context,
        inputs_file=INPUTS_FILE,
        model_revision=model_revision,
    )
    say(
        f"replay: {archived.onnx.file.name} archived, sha256 {archived.onnx.sha256[:16]}..."
        if archived.onnx
        else f"replay: not archived ({archived.manifest['replay_unavailable']})"
    )

    tune_texts = tu["text"].to_list()
    step = max(cfg.batches)
    tune_pred: list[str] = []
    for i in range(0, len(tune_texts), step):
        tune_pred.extend(workload.classify(tune_texts[i : i + step], step))
    reference = quality(pl.Series(tune_pred, dtype=pl.String), tu["label"], cfg.metric)
    rule = QualityRule.fix(cfg, reference, tu.height)
    lengths = workload.token_lengths(eval_texts)
    variants = list(cfg.variant_ids)
    return Declaration(
        eval_ids=eval_ids,
        eval_texts=eval_texts,
        classes=corpus.classes,
        references=ev.select("id", "label"),
        split_sizes={"eval": ev.height, "train": tr.height, "tune": tu.height},
        trained=trained,
        workload=workload,
        main_load_seconds=main_load_seconds,
        rule=rule,
        truncated=sum(1 for n in lengths if n > cfg.context),
        batch_of=dict(zip(variants, cfg.batches, strict=True)),
        order=draw_pass_order(variants, cfg.warm_passes, cfg.seed),
        revisions=Revisions(
            corpus=corpus.revision,
            model=model_revision,
            tokenizer=pinned["tokenizer"],
            code=code,
            config=pinned.get("config"),
            recipe=pinned.get("recipe"),
        ),
        declared_at=now_iso(),
        load_before=loadwatch.loadavg(),
        load_probe=loadwatch.before(),
        replay=archived.manifest,
    )


# --- 3. the passes --------------------------------------------------------------------------


@dataclass(frozen=True)
class PassResults:
    records: dict[tuple[str, str, int], dict[str, Any]]
    """(variant, phase, run_index) -> the pass record (`entry`, `cells`, `gpus_used`)."""
    timeline: list[dict[str, Any]]
    load: dict[str, Any]
    """The machine's load while the passes ran (`runner.loadwatch.LoadWatch.record`)."""


def run_passes(
    cfg: RunConfig, root: Path, inputs: Inputs, decl: Declaration, say: Progress
) -> PassResults:
    rule = decl.rule
    say(
        f"quality rule: {rule.metric} >= {rule.threshold} and >= {rule.reference:.4f} - "
        f"{rule.tolerance} (tune split); {len(decl.order)} timeline entries on {inputs.device}, "
        f"{inputs.threads.torch} torch thread(s) ({inputs.threads.source['torch']})"
    )
    say(loadwatch.sentence(decl.load_probe, "before measuring"))
    records: dict[tuple[str, str, int], dict[str, Any]] = {}
    timeline: list[dict[str, Any]] = []
    watch = loadwatch.LoadWatch().start()
    step = Steps(say, len(decl.order), watch, [item["phase"] for item in decl.order])
    first_warmup = True
    with tempfile.TemporaryDirectory(prefix="runner-jobs-") as jobs, watch:
        for item in decl.order:
            v, phase, n = item["variant_id"], item["phase"], item["run_index"]
            spec = PassSpec(
                item["order_index"], v, phase, n, decl.batch_of[v], inputs.device, cfg.timer_scope
            )
            if phase == "cold":
                rec = _cold_pass(
                    cfg, spec, root, decl.trained.model_dir, Path(jobs), inputs.threads.torch
                )
            elif phase == "warmup":
                entry = run_warmup(
                    decl.workload,
                    item["order_index"],
                    v,
                    decl.batch_of[v],
                    cfg.warmup_iterations,
                    decl.eval_texts,
                    load_seconds=decl.main_load_seconds if first_warmup else None,
                )
                first_warmup = False
                timeline.append(entry)
                step(
                    item["order_index"],
                    f"{v} warm-up: {entry['status']}, "
                    f"{entry['iterations']} batches in {entry['elapsed_seconds']:.3f} s",
                )
                continue
            else:
                rec = run_pass(decl.workload, spec, root, fresh_process=False)
            records[(v, phase, n)] = rec
            timeline.append(rec["entry"])
            e = rec["entry"]
            took = "-" if e["elapsed_seconds"] is None else f"{e['elapsed_seconds']:.3f} s"
            step(
                item["order_index"],
                f"{v} {phase}-{n}: {e['status']}, {took}, "
                f"{rec['answers']} answers"
                + ("" if e["incident"] is None else f" ({e['incident']['message']})"),
            )
    timeline.sort(key=lambda e: e["order_index"])
    load = watch.record()
    say(loadwatch.sentence(load))
    return PassResults(records, timeline, load)


def _cold_pass(
    cfg: RunConfig, spec: PassSpec, root: Path, model_dir: Path, jobs: Path, threads: int
) -> dict[str, Any]:
    """One cold pass in a fresh `python -m runner.a.pass_worker` process (A6.5)."""
    stem = f"{spec.variant_id}-{spec.phase}-{spec.run_index}"
    job, result = jobs / f"{stem}.json", jobs / f"{stem}.result.json"
    job.write_text(
        json.dumps(
            {
                "spec": spec.to_json(),
                "run_dir": str(root.resolve()),
                "model_dir": str(model_dir),
                "workload": cfg.workload_callable,
                "options": cfg.workload_options,
                "precision": cfg.precision,
                "context": cfg.context,
                "threads": threads,
                "result": str(result),
            }
        ),
        encoding="utf-8",
    )
    env = child_env()
    started = now_iso()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner.a.pass_worker", str(job)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, stderr = proc.communicate()
    if result.is_file():
        return json.loads(result.read_text(encoding="utf-8"))
    # the process died without a record: keep the row, say what is known (A6.4): the
    # placement and baselines it wrote before the pass, if it got that far
    out_file = root / spec.output_file
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.touch()
    tail = (stderr or "").strip().splitlines()[-3:]
    trace_path, place_path = root / spec.memory_trace, root / spec.placement_file
    trace = json.loads(trace_path.read_text()) if trace_path.is_file() else None
    place = json.loads(place_path.read_text()) if place_path.is_file() else None
    cells = (
        None
        if trace is None
        else {
            k: trace.get(k)
            for k in (
                "baseline_allocated_bytes",
                "baseline_reserved_bytes",
                "peak_allocated_bytes",
                "peak_reserved_bytes",
            )
        }
    )
    return {
        "entry": spec.entry(
            status="error",
            started_at=started,
            ended_at=now_iso(),
            elapsed_seconds=None,
            load_seconds=None,
            pid=proc.pid,
            fresh_process=True,
            memory_trace=spec.memory_trace if trace is not None else None,
            placement=spec.placement_file if place is not None else None,
            incident={
                "kind": "error",
                "message": f"pass process exited {proc.returncode} without a record "
                f"after {time.perf_counter() - t0:.1f} s (start to exit)",
                "exception": " | ".join(tail)[:2000],
            },
        ),
        "cells": cells,
        "gpus_used": place["gpus_used"] if place else [],
        "answers": 0,
    }
