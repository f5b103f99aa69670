"""Stage 4 of `runner execute` (`runner.a.execute`): every output file read back for the set
check and quality (A2), then the files those checks and the passes' records fill: the set
check, environment, economics, the CSV's rows and their notes, the timeline, claims, and the
manifest's sections (returned for `StagedRunDir.publish`, which writes it last)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from runner import artifacts, loadwatch
from runner.a import claims
from runner.a.passes import INPUTS_FILE
from runner.a.setcheck import check_output
from runner.environment import observe
from runner.manifest import Header

if TYPE_CHECKING:
    from runner.a.config import RunConfig
    from runner.a.economics import ChosenOffer
    from runner.a.execute import Declaration, Inputs, PassResults
    from runner.corpus import Corpus

TIMER_SCOPES = {
    "full_chain": "full chain: reading the inputs file, tokenization, classification and "
    "writing the output file, per pass; model loading excluded (load_seconds)",
    "processing_only": "processing only: the sum of the classify calls (tokenization and "
    "classification); reading and writing excluded",
}

SCOPE_SHORT = {
    "full_chain": "reading, tokenization, classification and writing; model loading excluded",
    "processing_only": "tokenization and classification only",
}

PASS_ORDER_METHOD = (
    "drawn from the seed before measuring: cold passes (each in a fresh "
    "process) in a seeded permutation, then one warm-up block per variant, "
    "then one seeded permutation of the variants per warm round, redrawn so a "
    "round never starts with the variant that ended the previous one"
)


def read_back(
    cfg: RunConfig, root: Path, decl: Declaration, passes: PassResults
) -> list[dict[str, Any]]:
    """A2 from the files as written: one set-check record per measured pass."""
    expected = pl.Series("id", decl.eval_ids, dtype=pl.String)
    checks = []
    for v in decl.variants:
        for phase, n in [("cold", 1)] + [("warm", i) for i in range(1, cfg.warm_passes + 1)]:
            rel = passes.records[(v, phase, n)]["entry"]["output_file"]
            res = check_output(root / rel, rel, expected, decl.classes, decl.references, cfg.metric)
            res["corpus_accepted"] = (
                res["ids_match"] and res["format_valid"] and decl.rule.accepts(res["quality_value"])
            )
            checks.append({"variant_id": v, "phase": phase, "run_index": n, **res})
    return checks


def write(
    cfg: RunConfig,
    root: Path,
    inputs: Inputs,
    decl: Declaration,
    passes: PassResults,
    checks: list[dict[str, Any]],
) -> dict[str, Any]:
    """Every file but the manifest; returns the manifest (without `artifacts`)."""
    expected = pl.Series("id", decl.eval_ids, dtype=pl.String)
    dup_expected = expected.value_counts().filter(pl.col("count") > 1)["id"].to_list()
    artifacts.write_json(
        root / "checks/set-check.json",
        {
            "expected_file": "corpus/expected_ids.txt",
            "expected_count": len(decl.eval_ids),
            "expected_duplicates": dup_expected,
            "passes": checks,
            "method": "each output file read back from disk; IDs compared as sets with "
            "duplicates counted; quality recomputed from the file and "
            "corpus/references.jsonl",
        },
    )

    gpus: dict[int, dict[str, Any]] = {}
    for rec in passes.records.values():
        for g in rec["gpus_used"]:
            gpus[g["index"]] = g
    env = observe(inputs.device, [gpus[i] for i in sorted(gpus)], decl.revisions.code)
    env["concurrent_load"].update(
        loadavg_before_passes=decl.load_before, before=decl.load_probe, while_measuring=passes.load
    )
    artifacts.write_json(root / "environment.json", env)
    offer = inputs.offer
    if offer is not None:
        (root / "economics").mkdir(exist_ok=True)
        (root / "economics/offers.json").write_bytes(offer.offers_bytes)

    accepted_by_variant = {
        v: int(any(c["corpus_accepted"] for c in checks if c["variant_id"] == v))
        for v in decl.variants
    }
    common = _common_notes(cfg, inputs, decl, env)
    rows = [
        _row(
            cfg,
            c,
            passes.records[(c["variant_id"], c["phase"], c["run_index"])],
            decl,
            env,
            offer,
            accepted_by_variant,
            common,
        )
        for c in checks
    ]
    artifacts.write_csv(root / "resultats-bruts.csv", rows)
    artifacts.write_jsonl(root / "timeline.jsonl", passes.timeline)
    artifacts.write_json(
        root / "claims.json", claims.claims(cfg.experiment_id, passes.timeline, checks)
    )

    complete = len(passes.records) == len(decl.variants) * (1 + cfg.warm_passes)
    return {
        **Header(
            "accepted-corpus-cost", cfg.experiment_id, complete, decl.declared_at, cfg.source
        ).to_json(),
        "task": _task(decl, inputs.corpus),
        "quality_rule": decl.rule.to_json(),
        "revisions": decl.revisions.to_json(),
        "seed": cfg.seed,
        "timer_scope": cfg.timer_scope,
        "timer_scope_description": TIMER_SCOPES[cfg.timer_scope],
        "announced_variable": "batch",
        "variants": _variants(cfg, decl, inputs.device),
        "warmup_iterations": cfg.warmup_iterations,
        "warm_passes_per_variant": cfg.warm_passes,
        "pass_order": decl.order,
        "pass_order_method": PASS_ORDER_METHOD,
        "corpus": _corpus(cfg, decl, inputs.corpus),
        "workload": _workload(cfg, decl, inputs),
        "threads": inputs.threads.to_json(),
        "economics": _economics(offer),
        "notes": common,
        **decl.replay,
        **({"off_protocol": inputs.off_protocol} if inputs.off_protocol else {}),
    }


def _task(decl: Declaration, corpus: Corpus) -> dict[str, Any]:
    return {
        "classes": list(decl.classes),
        "output_format": {
            "type": "jsonl",
            "required_fields": ["id", "label"],
            "label_values": "one of task.classes",
        },
        "unit_of_work": (
            f"one accepted evaluation corpus of {len(decl.eval_ids)} texts "
            f"({corpus.revision[:19]}...)"
        ),
    }


def _variants(cfg: RunConfig, decl: Declaration, device: str) -> list[dict[str, Any]]:
    return [
        {
            "variant_id": v,
            "batch": decl.batch_of[v],
            "precision": cfg.precision,
            "context": cfg.context,
            "device": device,
            "input_order": "corpus/expected_ids.txt order",
        }
        for v in decl.variants
    ]


def _corpus(cfg: RunConfig, decl: Declaration, corpus: Corpus) -> dict[str, Any]:
    sizes = decl.split_sizes
    return {
        "source": corpus.source,
        "revision": corpus.revision,
        "eval_size": sizes["eval"],
        "train_size": sizes["train"],
        "tune_size": sizes["tune"],
        "inputs_file": INPUTS_FILE,
        "truncation": {
            "context_tokens": cfg.context,
            "truncated_texts": decl.truncated,
            "eval_texts": len(decl.eval_texts),
            "rule": "texts longer than the context limit (in the "
            "workload's tokens) keep their first tokens",
        },
    }


def _workload(cfg: RunConfig, decl: Declaration, inputs: Inputs) -> dict[str, Any]:
    return {
        "name": inputs.factory.name,
        "callable": cfg.workload_callable,
        "description": decl.trained.prepared.description,
        "generation_options": inputs.recorded_options,
        "trained_at_run_time": inputs.factory.trains_at_run_time,
        "train_seconds": decl.trained.train_seconds,
        "torch_threads": inputs.threads.torch,
    }


def _economics(offer: ChosenOffer | None) -> dict[str, Any] | None:
    if offer is None:
        return None
    return {
        "offers_file": "economics/offers.json",
        "offer_id": offer.offer["offer_id"],
        "lots": offer.lots,
        "gpu_model": offer.offer["gpu_model"],
        "duration_days": offer.duration_days,
        "package_total_usd_minor": offer.package_total_usd_minor,
        "example": bool(offer.offer.get("example", False)),
    }


def _common_notes(cfg: RunConfig, inputs: Inputs, decl: Declaration, env: dict[str, Any]) -> str:
    def fmt(load: list[float] | None) -> str:
        return "not available" if load is None else " ".join(f"{x:.2f}" for x in load)

    loadavg = (
        f"{fmt(env['concurrent_load'].get('loadavg_before_passes'))} before the passes, "
        f"{fmt(env['concurrent_load']['loadavg'])} after"
    )
    procs = env["concurrent_load"]["gpu_processes"]
    others = (
        f"other GPU processes: not observed (NVML {env['concurrent_load']['nvml']})"
        if procs is None
        else f"other GPU processes: {len(procs)}" + (f" {procs}" if procs else "")
    )
    rule = decl.rule
    parts = [
        f"timer scope {cfg.timer_scope} ({SCOPE_SHORT[cfg.timer_scope]})",
        f"quality: accepted when {cfg.metric} >= {rule.threshold} and >= reference "
        f"{rule.reference:.4f} - tolerance {cfg.tolerance} (max_decrease; reference = the "
        "trained model on the tune split, fixed before measuring)",
        f"truncation: {decl.truncated} of {len(decl.eval_texts)} eval texts cut at "
        f"{cfg.context} tokens",
        f"code: {decl.revisions.code}",
        f"model: {decl.trained.prepared.description}",
        f"threads: torch intra-op {inputs.threads.torch} ({inputs.threads.source['torch']})",
        f"concurrent load: {loadwatch.sentence(env['concurrent_load']['while_measuring'])}; "
        f"{loadwatch.sentence(env['concurrent_load']['before'], 'before measuring')}; "
        f"loadavg {loadavg}; {others}",
    ]
    if inputs.recorded_options:
        parts.append(f"workload options: {json.dumps(inputs.recorded_options, sort_keys=True)}")
    corpus = inputs.corpus
    if corpus.notes:
        parts.append(corpus.notes)
    if cfg.notes:
        parts.append(cfg.notes)
    return "; ".join(parts)


def _row(
    cfg: RunConfig,
    check: dict[str, Any],
    rec: dict[str, Any],
    decl: Declaration,
    env: dict[str, Any],
    offer: ChosenOffer | None,
    accepted_by_variant: dict[str, int],
    common: str,
) -> dict[str, Any]:
    e = rec["entry"]
    cells = rec["cells"] or {}
    gpus = rec["gpus_used"]
    used_gpu = bool(gpus)
    notes = [f"status {e['status']}"]
    if e["phase"] == "cold":
        load = (
            "model load not recorded"
            if e["load_seconds"] is None
            else f"model load {e['load_seconds']:.3f} s, not in elapsed"
        )
        notes.append(f"cold pass in a fresh process (pid {e['pid']}), {load}")
    if e["incident"]:
        inc = e["incident"]
        until = (
            "elapsed_seconds is the time until the failure"
            if e["elapsed_seconds"] is not None
            else "elapsed not recorded"
        )
        notes.append(
            f"INCIDENT {inc['kind']}: {inc['message']} ({until}; the "
            f"{check['observed_ids']} answers produced before it are kept)"
        )
    notes.append(f"artifacts: {e['output_file']}, {e['memory_trace']}, {e['placement']}")
    notes.append(common)
    rev = decl.revisions
    return {
        "experiment_id": cfg.experiment_id,
        "variant_id": check["variant_id"],
        "corpus_revision": rev.corpus,
        "model_revision": rev.model,
        "tokenizer_revision": rev.tokenizer,
        "seed": cfg.seed,
        "gpu_model": ", ".join(sorted({g["name"] for g in gpus})) if used_gpu else None,
        "gpu_count": len({g["index"] for g in gpus}),
        "device": env["device"],
        "driver_version": env["driver_version"] if used_gpu else None,
        "python_version": env["python_version"],
        "torch_version": env["torch_version"],
        "runtime_version": env["runtime"]["version"] if used_gpu else None,
        "precision": cfg.precision,
        "batch": decl.batch_of[check["variant_id"]],
        "context": cfg.context,
        "phase": check["phase"],
        "run_index": check["run_index"],
        "warmup_iterations": cfg.warmup_iterations,
        "expected_ids": len(decl.eval_ids),
        "observed_ids": check["observed_ids"],
        "ids_match": check["ids_match"],
        "format_valid": check["format_valid"],
        "quality_metric": cfg.metric,
        "quality_threshold": decl.rule.threshold,
        "quality_tolerance": cfg.tolerance,
        "quality_value": check["quality_value"],
        "corpus_accepted": check["corpus_accepted"],
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
