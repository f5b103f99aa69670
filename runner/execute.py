"""`runner execute`: protocol A from configuration to a complete run directory.

Order of work, so that nothing measured can influence what was declared:
1. check every input (config, offers, device, workload, corpus); any fault stops here with
   exit 2 and nothing written;
2. stage the corpus files and train/stage the model under `<RUN_DIR>.partial-<pid>/`;
3. fix the quality rule from the tune split, count truncation, draw the pass order from the
   seed, note the declaration time;
4. cold passes, each in a fresh process; then in this process one warm-up block per variant
   and the warm passes in seeded, alternating rounds;
5. read every output file back for the set check and quality (A2), write the CSV, timeline,
   environment, set check and economics, validate all of it, write the manifest last, and
   rename the directory into place.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import torch

import runner
from runner import artifacts
from runner.config import RunConfig
from runner.corpus import Corpus, load_corpus
from runner.economics import ChosenOffer, choose_offer
from runner.environment import observe
from runner.errors import RunnerError
from runner.passes import INPUTS_FILE, PassSpec, now_iso, run_pass, run_warmup
from runner.revisions import code_revision, file_sha256
from runner.setcheck import accepted, check_output, quality
from runner.workloads import TrainingData, WorkloadFactory, resolve

Progress = Callable[[str], None]

TIMER_SCOPES = {
    "full_chain": "full chain: reading the inputs file, tokenization, classification and "
                  "writing the output file, per pass; model loading excluded (load_seconds)",
    "processing_only": "processing only: the sum of the classify calls (tokenization and "
                       "classification); reading and writing excluded",
}


def resolve_device(name: str) -> str:
    """'auto' -> cuda:N when a GPU is visible, else cpu; a named device must exist."""
    if name == "auto":
        return f"cuda:{torch.cuda.current_device()}" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(name)
    except (RuntimeError, ValueError):
        raise RunnerError(f"config: device {name!r} is not a torch device") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise RunnerError(f"config: device {name!r} asked for, but torch sees no CUDA "
                              f"device (torch {torch.__version__})")
        index = torch.cuda.current_device() if dev.index is None else dev.index
        if index >= torch.cuda.device_count():
            raise RunnerError(f"config: device {name!r}: only {torch.cuda.device_count()} "
                              "CUDA device(s) visible")
        return f"cuda:{index}"
    return str(dev)


def cpu_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def draw_pass_order(variants: list[str], warm_passes: int, seed: int) -> list[dict[str, Any]]:
    """A6.2, drawn before measuring: the cold passes in a seeded permutation, one warm-up block
    per variant (seeded permutation), then `warm_passes` rounds, each a seeded permutation of
    the variants, redrawn when it would start with the variant that ended the round before
    (so the order alternates)."""
    rng = random.Random(seed)
    order: list[tuple[str, str, int]] = []
    order += [(v, "cold", 1) for v in rng.sample(variants, len(variants))]
    order += [(v, "warmup", 1) for v in rng.sample(variants, len(variants))]
    last = None
    for r in range(1, warm_passes + 1):
        perm = rng.sample(variants, len(variants))
        for _ in range(20):
            if len(variants) == 1 or perm[0] != last:
                break
            perm = rng.sample(variants, len(variants))
        order += [(v, "warm", r) for v in perm]
        last = perm[-1]
    return [{"order_index": i, "variant_id": v, "phase": p, "run_index": n}
            for i, (v, p, n) in enumerate(order)]


def execute(cfg: RunConfig, out: Path, progress: Progress | None = None) -> Path:
    """Run protocol A as `cfg` says and write the complete run directory at `out`."""
    say = progress or (lambda _msg: None)
    # 1. every check before anything is measured or written
    if out.exists():
        raise RunnerError(f"run dir {out}: already exists; the runner never overwrites a run "
                          "(choose another --out or remove it)")
    offer = (choose_offer(cfg.economics.offers_file, cfg.economics.offer_id,
                          cfg.economics.lots) if cfg.economics else None)
    device = resolve_device(cfg.device)
    factory = resolve(cfg.workload_callable)
    factory.check(cfg.workload_options)
    corpus = load_corpus(cfg.corpus_path, cfg.eval_size, cfg.max_texts, cfg.seed)
    threads = max(1, min(cpu_threads(), factory.threads(cpu_threads())))
    torch.set_num_threads(threads)

    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.parent / f"{out.name}.partial-{os.getpid()}"
    partial.mkdir()
    say(f"building {out} in {partial.name}")
    try:
        return _run(cfg, out, partial, corpus, factory, offer, device, threads, say)
    except RunnerError as exc:
        raise RunnerError(f"{exc} (unfinished files left in {partial}: not a run)") from None


def _run(cfg: RunConfig, out: Path, root: Path, corpus: Corpus, factory: WorkloadFactory,
         offer: ChosenOffer | None, device: str, threads: int, say: Progress) -> Path:
    # 2. the corpus files and the model
    ev, tr, tu = corpus.split("eval"), corpus.split("train"), corpus.split("tune")
    eval_ids = ev["id"].to_list()
    eval_texts = ev["text"].to_list()
    artifacts.write_lines(root / "corpus/expected_ids.txt", eval_ids)
    artifacts.write_jsonl(root / "corpus/references.jsonl",
                          ev.select("id", "label").to_dicts())
    artifacts.write_lines(root / "corpus/splits/train_ids.txt", tr["id"].to_list())
    artifacts.write_lines(root / "corpus/splits/tune_ids.txt", tu["id"].to_list())
    artifacts.write_jsonl(root / INPUTS_FILE, ev.select("id", "text").to_dicts())
    classes = corpus.classes
    say(f"corpus: {tr.height} train, {tu.height} tune, {ev.height} eval texts, "
        f"{len(classes)} classes; training the model")
    model_dir = root / "model"
    t = time.perf_counter()
    prepared = factory.prepare(TrainingData(tr["text"].to_list(), tr["label"].to_list(),
                                            classes), model_dir, cfg.seed, cfg.context,
                               cfg.workload_options)
    train_seconds = time.perf_counter() - t
    t = time.perf_counter()
    workload = factory.load(model_dir, device, cfg.precision, cfg.context, cfg.workload_options)
    main_load_seconds = time.perf_counter() - t

    # 3. the declaration: quality rule from the tune split, truncation, pass order
    tune_texts = tu["text"].to_list()
    step = max(cfg.batches)
    tune_pred: list[str] = []
    for i in range(0, len(tune_texts), step):
        tune_pred.extend(workload.classify(tune_texts[i:i + step], step))
    reference = quality(pl.Series(tune_pred, dtype=pl.String), tu["label"], cfg.metric)
    if cfg.threshold == "from_tune":
        # rounded down, so the binding condition stays value >= reference - tolerance
        threshold = max(0.0, math.floor((reference - cfg.tolerance) * 10_000) / 10_000)
        fixed_from = (f"reference = the trained model's {cfg.metric} on the tune split "
                      f"({tu.height} texts), computed before any measurement; threshold = "
                      "reference - tolerance, rounded down to 4 decimals")
    else:
        threshold = float(cfg.threshold)
        fixed_from = (f"threshold from the config ({cfg.source}); reference = the trained "
                      f"model's {cfg.metric} on the tune split, computed before measuring")
    lengths = workload.token_lengths(eval_texts)
    truncated = sum(1 for n in lengths if n > cfg.context)
    variants = list(cfg.variant_ids)
    batch_of = dict(zip(variants, cfg.batches, strict=True))
    order = draw_pass_order(variants, cfg.warm_passes, cfg.seed)
    revisions = {"corpus": corpus.revision,
                 "model": "sha256:" + file_sha256(prepared.weights_file),
                 "tokenizer": "sha256:" + file_sha256(prepared.tokenizer_file),
                 "code": code_revision()}
    declared_at = now_iso()
    load_before = _loadavg()

    # 4. the passes
    say(f"quality rule: {cfg.metric} >= {threshold} and >= {reference:.4f} - {cfg.tolerance} "
        f"(tune split); {len(order)} timeline entries on {device}")
    records: dict[tuple[str, str, int], dict[str, Any]] = {}
    timeline: list[dict[str, Any]] = []
    total = len(order)
    first_warmup = True
    with tempfile.TemporaryDirectory(prefix="runner-jobs-") as jobs:
        for item in order:
            v, phase, n = item["variant_id"], item["phase"], item["run_index"]
            spec = PassSpec(item["order_index"], v, phase, n, batch_of[v], device,
                            cfg.timer_scope)
            if phase == "cold":
                rec = _cold_pass(cfg, spec, root, model_dir, Path(jobs), threads)
            elif phase == "warmup":
                entry = run_warmup(workload, item["order_index"], v, batch_of[v],
                                   cfg.warmup_iterations, eval_texts,
                                   load_seconds=main_load_seconds if first_warmup else None)
                first_warmup = False
                timeline.append(entry)
                say(f"[{item['order_index'] + 1:>2}/{total}] {v} warm-up: {entry['status']}, "
                    f"{entry['iterations']} batches in {entry['elapsed_seconds']:.3f} s")
                continue
            else:
                rec = run_pass(workload, spec, root, fresh_process=False)
            records[(v, phase, n)] = rec
            timeline.append(rec["entry"])
            e = rec["entry"]
            took = "-" if e["elapsed_seconds"] is None else f"{e['elapsed_seconds']:.3f} s"
            say(f"[{item['order_index'] + 1:>2}/{total}] {v} {phase}-{n}: {e['status']}, "
                f"{took}, {rec['answers']} answers" + ("" if e["incident"] is None else
                                                       f" ({e['incident']['message']})"))

    # 5. read back, check, write, validate, declare
    expected = pl.Series("id", eval_ids, dtype=pl.String)
    references = ev.select("id", "label")
    checks = []
    for v in variants:
        for phase, n in [("cold", 1)] + [("warm", i) for i in range(1, cfg.warm_passes + 1)]:
            rel = records[(v, phase, n)]["entry"]["output_file"]
            res = check_output(root / rel, rel, expected, classes, references, cfg.metric)
            res["corpus_accepted"] = (res["ids_match"] and res["format_valid"]
                                      and accepted(res["quality_value"], threshold, reference,
                                                   cfg.tolerance))
            checks.append({"variant_id": v, "phase": phase, "run_index": n, **res})
    dup_expected = (expected.value_counts().filter(pl.col("count") > 1)["id"].to_list())
    set_check = {"expected_file": "corpus/expected_ids.txt", "expected_count": len(eval_ids),
                 "expected_duplicates": dup_expected, "passes": checks,
                 "method": "each output file read back from disk; IDs compared as sets with "
                           "duplicates counted; quality recomputed from the file and "
                           "corpus/references.jsonl"}
    artifacts.write_json(root / "checks/set-check.json", set_check)

    gpus: dict[int, dict[str, Any]] = {}
    for rec in records.values():
        for g in rec["gpus_used"]:
            gpus[g["index"]] = g
    env = observe(device, [gpus[i] for i in sorted(gpus)], revisions["code"])
    env["concurrent_load"]["loadavg_before_passes"] = load_before
    artifacts.write_json(root / "environment.json", env)
    if offer is not None:
        (root / "economics").mkdir(exist_ok=True)
        (root / "economics/offers.json").write_bytes(offer.offers_bytes)

    accepted_by_variant = {v: int(any(c["corpus_accepted"] for c in checks
                                      if c["variant_id"] == v)) for v in variants}
    common = _common_notes(cfg, corpus, threshold, reference, truncated, len(eval_texts),
                           revisions["code"], env, prepared.description)
    rows = [_row(cfg, c, records[(c["variant_id"], c["phase"], c["run_index"])], batch_of,
                 revisions, env, offer, accepted_by_variant, threshold, common,
                 len(eval_ids))
            for c in checks]
    (root / "resultats-bruts.csv").write_text(artifacts.csv_text(rows), encoding="utf-8",
                                              newline="")
    timeline.sort(key=lambda e: e["order_index"])
    artifacts.write_jsonl(root / "timeline.jsonl", timeline)

    manifest = {
        "schema_version": "1",
        "protocol": "accepted-corpus-cost",
        "experiment_id": cfg.experiment_id,
        "status": "complete" if len(records) == len(variants) * (1 + cfg.warm_passes)
        else "aborted",
        "declared_at": declared_at,
        "completed_at": now_iso(),
        "runner": {"name": "gpubench-audit runner", "version": runner.__version__},
        "config_source": cfg.source,
        "task": {"classes": list(classes),
                 "output_format": {"type": "jsonl", "required_fields": ["id", "label"],
                                   "label_values": "one of task.classes"},
                 "unit_of_work": (f"one accepted evaluation corpus of {len(eval_ids)} texts "
                                  f"({corpus.revision[:19]}...)")},
        "quality_rule": {"metric": cfg.metric, "threshold": threshold,
                         "tolerance": cfg.tolerance, "tolerance_direction": "max_decrease",
                         "reference": {"name": f"trained model, {cfg.metric} on the tune split",
                                       "value": reference,
                                       "source": f"tune split ({tu.height} texts), before "
                                                 "measuring; never the evaluation outputs"},
                         "fixed_from": fixed_from,
                         "acceptance": "ids_match and format_valid and value >= threshold "
                                       "and value >= reference.value - tolerance"},
        "revisions": revisions,
        "seed": cfg.seed,
        "timer_scope": cfg.timer_scope,
        "timer_scope_description": TIMER_SCOPES[cfg.timer_scope],
        "announced_variable": "batch",
        "variants": [{"variant_id": v, "batch": batch_of[v], "precision": cfg.precision,
                      "context": cfg.context, "device": device,
                      "input_order": "corpus/expected_ids.txt order"} for v in variants],
        "warmup_iterations": cfg.warmup_iterations,
        "warm_passes_per_variant": cfg.warm_passes,
        "pass_order": order,
        "pass_order_method": ("drawn from the seed before measuring: cold passes (each in a "
                              "fresh process) in a seeded permutation, then one warm-up block "
                              "per variant, then one seeded permutation of the variants per "
                              "warm round, redrawn so a round never starts with the variant "
                              "that ended the previous one"),
        "corpus": {"source": corpus.source, "revision": corpus.revision,
                   "eval_size": ev.height, "train_size": tr.height, "tune_size": tu.height,
                   "inputs_file": INPUTS_FILE,
                   "truncation": {"context_tokens": cfg.context, "truncated_texts": truncated,
                                  "eval_texts": len(eval_texts),
                                  "rule": "texts longer than the context limit (in the "
                                          "workload's tokens) keep their first tokens"}},
        "workload": {"name": factory.name, "callable": cfg.workload_callable,
                     "description": prepared.description,
                     "generation_options": cfg.workload_options,
                     "train_seconds": train_seconds, "torch_threads": threads},
        "economics": None if offer is None else {
            "offers_file": "economics/offers.json", "offer_id": offer.offer["offer_id"],
            "lots": offer.lots, "gpu_model": offer.offer["gpu_model"],
            "duration_days": offer.duration_days,
            "package_total_usd_minor": offer.package_total_usd_minor,
            "example": bool(offer.offer.get("example", False))},
        "notes": common,
    }
    artifacts.validate_run_dir(root)  # everything but the manifest
    manifest["artifacts"] = artifacts.artifact_hashes(root)
    artifacts.validate("manifest", manifest, "manifest.json")
    artifacts.write_json(root / "manifest.json", manifest)
    if out.exists():
        raise RunnerError(f"run dir {out}: appeared while running; the finished run is left "
                          f"in {root}")
    os.rename(root, out)
    ok = sum(c["corpus_accepted"] for c in checks)
    say(f"done: {out} ({ok}/{len(checks)} passes accepted)")
    return out


def _cold_pass(cfg: RunConfig, spec: PassSpec, root: Path, model_dir: Path, jobs: Path,
               threads: int) -> dict[str, Any]:
    """One cold pass in a fresh `python -m runner.pass_worker` process (A6.5)."""
    stem = f"{spec.variant_id}-{spec.phase}-{spec.run_index}"
    job, result = jobs / f"{stem}.json", jobs / f"{stem}.result.json"
    job.write_text(json.dumps({
        "spec": spec.to_json(), "run_dir": str(root.resolve()), "model_dir": str(model_dir),
        "workload": cfg.workload_callable, "options": cfg.workload_options,
        "precision": cfg.precision, "context": cfg.context, "threads": threads,
        "result": str(result)}), encoding="utf-8")
    # the worker imports what this process imports (a user's workload module included)
    path = [p for p in sys.path if p and os.path.isdir(p)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    started = now_iso()
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "runner.pass_worker", str(job)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
    cells = None if trace is None else {
        k: trace.get(k) for k in ("baseline_allocated_bytes", "baseline_reserved_bytes",
                                  "peak_allocated_bytes", "peak_reserved_bytes")}
    return {"entry": {
        "order_index": spec.order_index, "variant_id": spec.variant_id, "phase": spec.phase,
        "run_index": spec.run_index, "status": "error", "started_at": started,
        "ended_at": now_iso(), "elapsed_seconds": None, "load_seconds": None,
        "pid": proc.pid, "fresh_process": True,
        "output_file": spec.output_file,
        "memory_trace": spec.memory_trace if trace is not None else None,
        "placement": spec.placement_file if place is not None else None,
        "incident": {"kind": "error",
                     "message": f"pass process exited {proc.returncode} without a record "
                                f"after {time.perf_counter() - t0:.1f} s (start to exit)",
                     "exception": " | ".join(tail)[:2000]}},
        "cells": cells, "gpus_used": place["gpus_used"] if place else [], "answers": 0}


SCOPE_SHORT = {"full_chain": "reading, tokenization, classification and writing; model "
                              "loading excluded",
               "processing_only": "tokenization and classification only"}


def _loadavg() -> list[float] | None:
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def _common_notes(cfg: RunConfig, corpus: Corpus, threshold: float, reference: float,
                  truncated: int, n_eval: int, code: str, env: dict[str, Any],
                  model_desc: str) -> str:
    def fmt(load: list[float] | None) -> str:
        return "not available" if load is None else " ".join(f"{x:.2f}" for x in load)

    loadavg = (f"{fmt(env['concurrent_load'].get('loadavg_before_passes'))} before the passes, "
               f"{fmt(env['concurrent_load']['loadavg'])} after")
    procs = env["concurrent_load"]["gpu_processes"]
    others = (f"other GPU processes: not observed (NVML {env['concurrent_load']['nvml']})"
              if procs is None else f"other GPU processes: {len(procs)}"
              + (f" {procs}" if procs else ""))
    parts = [
        f"timer scope {cfg.timer_scope} ({SCOPE_SHORT[cfg.timer_scope]})",
        f"quality: accepted when {cfg.metric} >= {threshold} and >= reference "
        f"{reference:.4f} - tolerance {cfg.tolerance} (max_decrease; reference = the trained "
        "model on the tune split, fixed before measuring)",
        f"truncation: {truncated} of {n_eval} eval texts cut at {cfg.context} tokens",
        f"code: {code}",
        f"model: {model_desc}",
        f"concurrent load: loadavg {loadavg}; {others}",
    ]
    if cfg.workload_options:
        parts.append(f"workload options: {json.dumps(cfg.workload_options, sort_keys=True)}")
    if corpus.notes:
        parts.append(corpus.notes)
    if cfg.notes:
        parts.append(cfg.notes)
    return "; ".join(parts)


def _row(cfg: RunConfig, check: dict[str, Any], rec: dict[str, Any], batch_of: dict[str, int],
         revisions: dict[str, str], env: dict[str, Any], offer: ChosenOffer | None,
         accepted_by_variant: dict[str, int], threshold: float, common: str,
         n_expected: int) -> dict[str, Any]:
    e = rec["entry"]
    cells = rec["cells"] or {}
    gpus = rec["gpus_used"]
    used_gpu = bool(gpus)
    notes = [f"status {e['status']}"]
    if e["phase"] == "cold":
        load = ("model load not recorded" if e["load_seconds"] is None
                else f"model load {e['load_seconds']:.3f} s, not in elapsed")
        notes.append(f"cold pass in a fresh process (pid {e['pid']}), {load}")
    if e["incident"]:
        inc = e["incident"]
        until = ("elapsed_seconds is the time until the failure"
                 if e["elapsed_seconds"] is not None else "elapsed not recorded")
        notes.append(f"INCIDENT {inc['kind']}: {inc['message']} ({until}; the "
                     f"{check['observed_ids']} answers produced before it are kept)")
    notes.append(f"artifacts: {e['output_file']}, {e['memory_trace']}, {e['placement']}")
    notes.append(common)
    return {
        "experiment_id": cfg.experiment_id, "variant_id": check["variant_id"],
        "corpus_revision": revisions["corpus"], "model_revision": revisions["model"],
        "tokenizer_revision": revisions["tokenizer"], "seed": cfg.seed,
        "gpu_model": ", ".join(sorted({g["name"] for g in gpus})) if used_gpu else None,
        "gpu_count": len({g["index"] for g in gpus}), "device": env["device"],
        "driver_version": env["driver_version"] if used_gpu else None,
        "python_version": env["python_version"], "torch_version": env["torch_version"],
        "runtime_version": env["runtime"]["version"] if used_gpu else None,
        "precision": cfg.precision, "batch": batch_of[check["variant_id"]],
        "context": cfg.context, "phase": check["phase"], "run_index": check["run_index"],
        "warmup_iterations": cfg.warmup_iterations,
        "expected_ids": n_expected,
        "observed_ids": check["observed_ids"], "ids_match": check["ids_match"],
        "format_valid": check["format_valid"], "quality_metric": cfg.metric,
        "quality_threshold": threshold, "quality_tolerance": cfg.tolerance,
        "quality_value": check["quality_value"], "corpus_accepted": check["corpus_accepted"],
        "elapsed_seconds": e["elapsed_seconds"],
        "baseline_allocated_bytes": cells.get("baseline_allocated_bytes"),
        "baseline_reserved_bytes": cells.get("baseline_reserved_bytes"),
        "peak_allocated_bytes": cells.get("peak_allocated_bytes"),
        "peak_reserved_bytes": cells.get("peak_reserved_bytes"),
        "duration_days": offer.duration_days if offer else None,
        "lots": offer.lots if offer else None,
        "package_total_usd_minor": offer.package_total_usd_minor if offer else None,
        "accepted_unique_corpora": accepted_by_variant[check["variant_id"]],
        "notes": "; ".join(notes),
    }
