"""Small, clean protocol A run directories for tests and benchmarks, written exactly per
docs/run-dir.md and the schemas, with no dependency on `runner` or `auditor`.

`make_clean_run(path)` writes one (`claims=True`: with an honest `claims.json` too);
`recompute_claims(path)` re-derives the CSV's and the set-check's claims from the output
files after a test mutated them (plain Python, a second, independent implementation of the
metrics the auditor computes with polars); `write_claims(path)` writes the typed claims the
CSV supports; `rehash(path)` rewrites the manifest's SHA-256 table so only the rule under
test can catch a mutation; `edit_rows`, `edit_json`, `edit_timeline` and `edit_output` change
one artifact of a built run (re-hashed, but for the outputs, whose claims the caller
recomputes), and `pass_row`, `set_at`, `shift_iso` find and change what they edit.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import statistics
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

COLUMNS = (
    "experiment_id",
    "variant_id",
    "corpus_revision",
    "model_revision",
    "tokenizer_revision",
    "seed",
    "gpu_model",
    "gpu_count",
    "device",
    "driver_version",
    "python_version",
    "torch_version",
    "runtime_version",
    "precision",
    "batch",
    "context",
    "phase",
    "run_index",
    "warmup_iterations",
    "expected_ids",
    "observed_ids",
    "ids_match",
    "format_valid",
    "quality_metric",
    "quality_threshold",
    "quality_tolerance",
    "quality_value",
    "corpus_accepted",
    "elapsed_seconds",
    "baseline_allocated_bytes",
    "baseline_reserved_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
    "duration_days",
    "lots",
    "package_total_usd_minor",
    "accepted_unique_corpora",
    "notes",
)

CLASSES = ("negative", "neutral", "positive")
T0 = datetime(2026, 11, 2, 9, 0, 0, tzinfo=UTC)


def _iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def _dump(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")


def _jsonl(path: Path, rows: Iterable[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _ids(path: Path, ids: Sequence[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(i + "\n" for i in ids), encoding="utf-8")


def make_clean_run(
    path: Path,
    *,
    eval_size: int = 30,
    variants: Sequence[str] = ("batch-1", "batch-4"),
    device: str = "cpu",
    warm_passes: int = 5,
    warmup_iterations: int = 3,
    classes: Sequence[str] = CLASSES,
    error_every: int = 10,
    lots: int = 1,
    gpus_per_lot: int = 1,
    experiment_id: str = "exp-batch",
    claims: bool = False,
    warm_in_blocks: bool = False,
    trained: bool = False,
    model: str = "exp-batch",
) -> Path:
    """Write a clean protocol A run dir at PATH (created) and return PATH.

    Predictions equal the reference except every `error_every`-th ID (macro-F1 about 0.9,
    above the threshold 0.6 and within 0.1 of the reference 0.85). Variants are
    `batch-<n>`; on `device="cuda:0"` memory is measured (plausible bytes), on CPU the four
    memory cells are empty. Passes: one cold pass per variant, each in a fresh process, a
    warm-up block per variant, then `warm_passes` warm passes per variant in alternating
    order (`warm_in_blocks`: all of one variant, then the next, the method "sequential").
    `trained`: the workload trained at run time, as the runner's default one: its weights
    `model/weights.pt`, its recipe `model/recipe.json` (revisions.recipe), a bag-of-words
    tokenizer and an ONNX file archived under a replay section, and `TRUNCATED` evaluation
    texts longer than the context, declared. MODEL names the synthetic weights: runs of one
    MODEL keep the same weights file."""
    root = Path(path)
    root.mkdir(parents=True, exist_ok=True)
    cuda = device.startswith("cuda")
    # The weights and tokenizer the revisions pin, kept under model/ (A1.2).
    weights = b"synthetic weights " + model.encode() + bytes(range(64))
    tokenizer = json.dumps(
        bow_tokenizer(CONTEXT) if trained else {"kind": "synthetic", "vocab": list(classes)}
    ).encode()
    (root / "model").mkdir(exist_ok=True)
    (root / ("model/weights.pt" if trained else "model/model.safetensors")).write_bytes(weights)
    (root / "model/tokenizer.json").write_bytes(tokenizer)
    rev = {
        "corpus": "sha256:" + "c" * 16,
        "model": "sha256:" + hashlib.sha256(weights).hexdigest(),
        "tokenizer": "sha256:" + hashlib.sha256(tokenizer).hexdigest(),
        "code": "git:0123456789ab",
    }
    eval_ids = [f"ev-{i:06d}" for i in range(eval_size)]
    refs = {i: classes[n % len(classes)] for n, i in enumerate(eval_ids)}
    _ids(root / "corpus/expected_ids.txt", eval_ids)
    long_text = " ".join(["word"] * (CONTEXT + 10))
    _jsonl(
        root / "corpus/eval-inputs.jsonl",
        (
            {"id": i, "text": long_text if trained and n < TRUNCATED else f"text of {i}"}
            for n, i in enumerate(eval_ids)
        ),
    )
    _jsonl(root / "corpus/references.jsonl", ({"id": i, "label": refs[i]} for i in eval_ids))
    _ids(root / "corpus/splits/train_ids.txt", [f"tr-{i:05d}" for i in range(eval_size * 2)])
    workload: dict[str, Any] = {"name": "synthetic-classifier"}
    replay: dict[str, Any] = {}
    if trained:
        recipe = {
            "kind": "trained-at-run-time/1",
            "code": rev["code"],
            "seed": 7,
            "workload": "synthetic:Trained",
            "options": {},
            "context": CONTEXT,
            "training_inputs": {
                "corpus": rev["corpus"],
                "split": "train",
                "ids_file": "corpus/splits/train_ids.txt",
                "ids_sha256": _sha(root / "corpus/splits/train_ids.txt"),
            },
        }
        _dump(root / "model/recipe.json", recipe)
        (root / "model/model.onnx").write_bytes(b"synthetic onnx " + weights)
        rev["recipe"] = "sha256:" + _sha(root / "model/recipe.json")
        workload = {
            "name": "synthetic-trained",
            "callable": "synthetic:Trained",
            "generation_options": {},
            "trained_at_run_time": True,
        }
        replay = {
            "replay": {
                "model": {
                    "file": "model/model.onnx",
                    "sha256": _sha(root / "model/model.onnx"),
                    "format": "onnx",
                    "exported_from": rev["model"],
                    "inputs": [
                        {"name": "ids", "tensor": "ids", "dtype": "int64"},
                        {"name": "offsets", "tensor": "offsets", "dtype": "int64"},
                    ],
                    "outputs": [{"name": "scores", "dtype": "float32"}],
                },
                "tokenizer": {
                    "file": "model/tokenizer.json",
                    "kind": "bow-words-pairs/1",
                    "sha256": hashlib.sha256(tokenizer).hexdigest(),
                },
                "context": CONTEXT,
                "labels": list(classes),
                "inputs": "corpus/eval-inputs.jsonl",
                "postprocess": "argmax over scores",
            }
        }
    _ids(root / "corpus/splits/tune_ids.txt", [f"tu-{i:05d}" for i in range(eval_size // 2 + 1)])

    # Outputs are written once and shared by every pass (same model, same inputs).
    lines = []
    for n, i in enumerate(eval_ids):
        label = refs[i]
        if error_every and n % error_every == error_every - 1:
            label = classes[(classes.index(label) + 1) % len(classes)]
        lines.append(json.dumps({"id": i, "label": label}) + "\n")
    output_text = "".join(lines)

    vconf = [
        {
            "variant_id": v,
            "batch": int(v.rsplit("-", 1)[-1]) if v[-1].isdigit() else 1,
            "precision": "float32",
            "context": CONTEXT,
            "device": device,
            "input_order": "expected_ids",
        }
        for v in variants
    ]

    # The order: cold passes, warm-up blocks, then alternating rounds of warm passes.
    order: list[tuple[str, str, int]] = [(v, "cold", 1) for v in variants]
    order += [(v, "warmup", 1) for v in variants]
    if warm_in_blocks:
        order += [(v, "warm", r) for v in variants for r in range(1, warm_passes + 1)]
    for r in range(1, warm_passes + 1 if not warm_in_blocks else 1):
        rnd = list(variants) if r % 2 else list(reversed(variants))
        order += [(v, "warm", r) for v in rnd]

    gpu_name = "NVIDIA H100 80GB HBM3" if cuda else None
    env = {
        "observed_at": _iso(T0 - timedelta(seconds=30)),
        "device": device,
        "gpu_model": gpu_name,
        "gpu_count": 1 if cuda else 0,
        "gpus_visible": 1 if cuda else 0,
        "driver_version": "550.54.15" if cuda else None,
        "runtime": (
            {"name": "cuda", "version": "12.4"} if cuda else {"name": "cpu", "version": None}
        ),
        "python_version": "3.11.9",
        "torch_version": "2.13.0+cu124" if cuda else "2.13.0+cpu",
        "code_version": rev["code"],
        "host": {"platform": "Linux", "machine": "x86_64", "cpu_count": 16},
        "concurrent_load": {
            "loadavg": [0.1, 0.2, 0.3],
            "gpu_processes": [] if cuda else None,
            "nvml": "available" if cuda else "unavailable (no GPU)",
        },
    }
    _dump(root / "environment.json", env)
    offer = {
        "offer_id": "h100-7d",
        "provider": "example",
        "gpu_model": "H100",
        "duration_days": 7,
        "price_per_lot_usd_minor": 123456,
        "gpus_per_lot": gpus_per_lot,
        "price_basis": "lot",
        "example": True,
    }
    _dump(
        root / "economics/offers.json",
        {"schema_version": "1", "example": True, "source": "test", "offers": [offer]},
    )

    timeline: list[dict] = []
    rows: list[dict] = []
    t = T0
    warm_pid = 5000
    for k, (v, phase, run) in enumerate(order):
        vc = vconf[variants.index(v)]
        if phase == "warmup":
            start, t = t, t + timedelta(seconds=0.5)
            timeline.append(
                {
                    "order_index": k,
                    "variant_id": v,
                    "phase": "warmup",
                    "run_index": 1,
                    "status": "ok",
                    "started_at": _iso(start),
                    "ended_at": _iso(t),
                    "elapsed_seconds": 0.5,
                    "pid": warm_pid,
                    "fresh_process": False,
                    "iterations": warmup_iterations,
                }
            )
            continue
        elapsed = round((2.5 if phase == "cold" else 1.0) + 0.0123 * k / vc["batch"], 6)
        load = 1.25 if phase == "cold" else None
        start = t + timedelta(seconds=load or 0)
        end = start + timedelta(seconds=elapsed + 0.01)
        t = end + timedelta(seconds=0.001)
        stem = f"{v}/{phase}-{run}"
        out_rel = f"outputs/{stem}.jsonl"
        (root / out_rel).parent.mkdir(parents=True, exist_ok=True)
        (root / out_rel).write_text(output_text, encoding="utf-8")
        pid = 4000 + k if phase == "cold" else warm_pid
        timeline.append(
            {
                "order_index": k,
                "variant_id": v,
                "phase": phase,
                "run_index": run,
                "status": "ok",
                "started_at": _iso(start),
                "ended_at": _iso(end),
                "elapsed_seconds": elapsed,
                "load_seconds": load,
                "pid": pid,
                "fresh_process": phase == "cold",
                "output_file": out_rel,
                "memory_trace": f"traces/memory/{stem}.json",
                "placement": f"evidence/placement/{stem}.json",
                "incident": None,
            }
        )
        mem: dict[str, int | None] = dict.fromkeys(
            (
                "baseline_allocated_bytes",
                "baseline_reserved_bytes",
                "peak_allocated_bytes",
                "peak_reserved_bytes",
            )
        )
        if cuda:
            base = 400_000_000 + 1024 * k
            mem = {
                "baseline_allocated_bytes": base,
                "baseline_reserved_bytes": base + 20_971_520,
                "peak_allocated_bytes": base + 52_428_800 * vc["batch"],
                "peak_reserved_bytes": base + 52_428_800 * vc["batch"] + 41_943_040,
            }
        trace: dict[str, Any] = {
            "variant_id": v,
            "phase": phase,
            "run_index": run,
            "device": device,
            "allocator_measured": cuda,
            **mem,
        }
        if cuda:
            trace.update(
                {
                    "synchronized": True,
                    "peak_stats_reset": True,
                    "memory_stats_before": memory_stats(mem, "before"),
                    "memory_stats_after": memory_stats(mem, "after"),
                }
            )
        else:
            trace["other_sources"] = [
                {
                    "name": "peak_rss",
                    "value": 812_000_000 + k,
                    "unit": "bytes",
                    "source": "resource.getrusage",
                }
            ]
        _dump(root / f"traces/memory/{stem}.json", trace)
        _dump(
            root / f"evidence/placement/{stem}.json",
            {
                "variant_id": v,
                "phase": phase,
                "run_index": run,
                "pid": pid,
                "requested_device": device,
                "parameter_devices": {device: 12},
                "parameter_count": 12,
                "input_devices": {device: -(-eval_size // vc["batch"])},
                "gpus_used": [{"index": 0, "name": gpu_name, "uuid": "GPU-0000"}] if cuda else [],
                "gpus_visible": 1 if cuda else 0,
            },
        )
        rows.append(
            {
                "experiment_id": experiment_id,
                "variant_id": v,
                "corpus_revision": rev["corpus"],
                "model_revision": rev["model"],
                "tokenizer_revision": rev["tokenizer"],
                "seed": 7,
                "gpu_model": gpu_name or "",
                "gpu_count": 1 if cuda else 0,
                "device": device,
                "driver_version": env["driver_version"] or "",
                "python_version": "3.11.9",
                "torch_version": env["torch_version"],
                "runtime_version": "12.4" if cuda else "",
                "precision": "float32",
                "batch": vc["batch"],
                "context": CONTEXT,
                "phase": phase,
                "run_index": run,
                "warmup_iterations": warmup_iterations,
                "expected_ids": eval_size,
                "quality_metric": "macro_f1",
                "quality_threshold": 0.6,
                "quality_tolerance": 0.1,
                "elapsed_seconds": elapsed,
                **{key: "" if val is None else val for key, val in mem.items()},
                "duration_days": 7,
                "lots": lots,
                "package_total_usd_minor": 123456 * lots,
                "notes": f"{phase} pass, ok; scope full_chain",
            }
        )
    _jsonl(root / "timeline.jsonl", timeline)
    _write_csv(root / "resultats-bruts.csv", rows)

    manifest = {
        "schema_version": "1",
        "protocol": "accepted-corpus-cost",
        "experiment_id": experiment_id,
        "status": "complete",
        "declared_at": _iso(T0 - timedelta(minutes=1)),
        "completed_at": _iso(t),
        "runner": {"name": "runfactory", "version": "test"},
        "task": {
            "classes": list(classes),
            "output_format": {"type": "jsonl", "required_fields": ["id", "label"]},
            "unit_of_work": f"one accepted evaluation corpus of {eval_size} texts",
        },
        "quality_rule": {
            "metric": "macro_f1",
            "threshold": 0.6,
            "tolerance": 0.1,
            "tolerance_direction": "max_decrease",
            "reference": {"name": "reference-model", "value": 0.85, "source": "tune split"},
            "fixed_from": "tune split, before measuring",
        },
        "revisions": rev,
        "seed": 7,
        "timer_scope": "full_chain",
        "announced_variable": "batch",
        "variants": vconf,
        "warmup_iterations": warmup_iterations,
        "warm_passes_per_variant": warm_passes,
        "pass_order": [
            {"order_index": k, "variant_id": v, "phase": p, "run_index": r}
            for k, (v, p, r) in enumerate(order)
        ],
        "pass_order_method": "sequential" if warm_in_blocks else "alternating rounds",
        "corpus": {
            "source": "synthetic",
            "revision": rev["corpus"],
            "eval_size": eval_size,
            "inputs_file": "corpus/eval-inputs.jsonl",
            "train_size": eval_size * 2,
            "tune_size": eval_size // 2 + 1,
            "truncation": {
                "context_tokens": CONTEXT,
                "truncated_texts": TRUNCATED if trained else 0,
                "eval_texts": eval_size,
                "rule": "the first words kept" if trained else "none cut",
            },
        },
        "workload": workload,
        **replay,
        "economics": {"offers_file": "economics/offers.json", "offer_id": "h100-7d", "lots": lots},
        "artifacts": {},
    }
    _dump(root / "manifest.json", manifest)
    recompute_claims(root)
    if claims:
        write_claims(root)
    return root


CONTEXT = 128
"""The context limit of every variant, in words."""
TRUNCATED = 2
"""Evaluation texts longer than the context in a `trained` run (its first ones)."""


def bow_tokenizer(context: int) -> dict[str, Any]:
    """A bag-of-words tokenizer as data (kind `bow-words-pairs/1`, the default workload's)."""
    return {
        "kind": "bow-words-pairs/1",
        "lowercase": True,
        "word_pattern": "[a-z_][a-z0-9_]*",
        "features": "words and neighbouring word pairs",
        "pair_separator": " ",
        "context": context,
        "unknown": "dropped",
        "vocab": ["text", "of", "word"],
    }


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def memory_stats(mem: dict[str, Any], when: str) -> dict[str, int]:
    """The counters of `torch.cuda.memory_stats()` a trace keeps beside its figures (a few
    of the real snapshot's keys): before the pass its baselines, after it its peaks."""
    if when == "before":
        return {
            "allocated_bytes.all.current": mem["baseline_allocated_bytes"],
            "reserved_bytes.all.current": mem["baseline_reserved_bytes"],
            "allocated_bytes.all.peak": mem["baseline_allocated_bytes"],
            "num_ooms": 0,
        }
    return {
        "allocated_bytes.all.current": mem["baseline_allocated_bytes"],
        "allocated_bytes.all.peak": mem["peak_allocated_bytes"],
        "reserved_bytes.all.current": mem["peak_reserved_bytes"],
        "reserved_bytes.all.peak": mem["peak_reserved_bytes"],
        "num_ooms": 0,
    }


def write_claims(path: Path) -> dict[str, Any]:
    """Write the typed claims.json the run's CSV supports (honest: warm median and range per
    variant over its completed passes, the accepted variants ranked by warm median, the
    accepted count over the package, one memory figure), rehash, and return it."""
    root = Path(path)
    manifest = read_json(root, "manifest.json")
    rows = read_rows(root)
    ok = {
        (e["variant_id"], e["phase"], str(e["run_index"]))
        for e in read_jsonl(root, "timeline.jsonl")
        if e["status"] == "ok"
    }
    warm: dict[str, list[float]] = {}
    for r in rows:
        completed = (r["variant_id"], r["phase"], r["run_index"]) in ok
        if r["phase"] == "warm" and r["elapsed_seconds"] and completed:
            warm.setdefault(r["variant_id"], []).append(float(r["elapsed_seconds"]))
    summaries = []
    for v, times in sorted(warm.items()):
        for stat, value in (
            ("median", statistics.median(times)),
            ("min", min(times)),
            ("max", max(times)),
        ):
            summaries.append(
                {
                    "variant_id": v,
                    "phase": "warm",
                    "statistic": stat,
                    "value": value,
                    "unit": "s",
                    "passes": len(times),
                }
            )
    accepted = sorted(
        {r["variant_id"] for r in rows if r["corpus_accepted"] == "true"}
        - {r["variant_id"] for r in rows if r["corpus_accepted"] != "true"}
    )
    medians = {s["variant_id"]: s["value"] for s in summaries if s["statistic"] == "median"}
    ranked = sorted((v for v in accepted if v in medians), key=lambda v: (medians[v], v))
    n_accepted = len({r["corpus_revision"] for r in rows if r["corpus_accepted"] == "true"})
    first = rows[0]
    figure = (
        {
            "name": "peak_reserved",
            "value": int(first["peak_reserved_bytes"]),
            "unit": "bytes",
            "source": "torch.cuda.max_memory_reserved",
            "variant_id": first["variant_id"],
            "phase": first["phase"],
            "run_index": int(first["run_index"]),
        }
        if first["peak_reserved_bytes"]
        else {
            "name": "process_peak_rss",
            "value": 812_000_000,
            "unit": "bytes",
            "source": "resource.getrusage",
        }
    )
    claims = {
        "schema_version": "2",
        "experiment_id": manifest["experiment_id"],
        "summaries": summaries,
        "rankings": [
            {
                "basis": {
                    "measure": "elapsed_seconds",
                    "phase": "warm",
                    "statistic": "median",
                    "unit": "s",
                    "order": "ascending",
                },
                "variants": ranked,
                "values": [medians[v] for v in ranked],
            }
        ]
        if ranked
        else [],
        "projections": [
            {
                "figure": "corpora_per_period",
                "variant_id": None,
                "value": n_accepted,
                "unit": "corpora",
                "period_days": 7,
                "accepted_corpora": n_accepted,
            }
        ]
        if n_accepted
        else [],
        "memory_figures": [figure],
    }
    write_json(root, "claims.json", claims)
    rehash(root)
    return claims


# -- reading and rewriting a run dir (used by mutations in tests) ---------------------------


def _write_csv(path: Path, rows: list[dict]) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\r\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _cell(r.get(k, "")) for k in COLUMNS})
    path.write_bytes(buf.getvalue().encode("utf-8"))


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    return str(v)


def read_rows(root: Path) -> list[dict[str, str]]:
    """resultats-bruts.csv as a list of dicts of strings."""
    with open(Path(root) / "resultats-bruts.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def write_rows(root: Path, rows: list[dict]) -> None:
    _write_csv(Path(root) / "resultats-bruts.csv", rows)


def read_json(root: Path, rel: str) -> Any:
    return json.loads((Path(root) / rel).read_text(encoding="utf-8"))


def write_json(root: Path, rel: str, obj: Any) -> None:
    _dump(Path(root) / rel, obj)


def read_jsonl(root: Path, rel: str) -> list[dict]:
    text = (Path(root) / rel).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write_jsonl(root: Path, rel: str, rows: Iterable[dict]) -> None:
    _jsonl(Path(root) / rel, rows)


def rehash(path: Path) -> None:
    """Rewrite manifest.json's `artifacts`: the SHA-256 of every other file of the run dir."""
    root = Path(path)
    manifest = read_json(root, "manifest.json")
    manifest["artifacts"] = {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).as_posix() != "manifest.json"
    }
    _dump(root / "manifest.json", manifest)


_rehash = rehash  # for edit_json, whose `rehash=` keyword hides the function


def quality(
    refs: dict[str, str], preds: dict[str, str], classes: Sequence[str], metric: str
) -> float | None:
    """The metric of one pass, in plain Python (the auditor's polars version is checked
    against this one). Missing predictions count as wrong; macro-F1 averages the declared
    classes present in the references or the predictions (sklearn, zero_division=0)."""
    if not preds:
        return None
    tp = dict.fromkeys(classes, 0)
    npred = dict.fromkeys(classes, 0)
    nref = dict.fromkeys(classes, 0)
    for i, r in refs.items():
        p = preds.get(i)
        nref[r] += 1
        if p is not None:
            npred[p] += 1
            tp[r] += p == r
    f1 = {c: (2 * tp[c] / (npred[c] + nref[c])) if npred[c] + nref[c] else 0.0 for c in classes}
    present = [c for c in classes if npred[c] + nref[c]]
    if metric == "accuracy":
        return sum(tp.values()) / len(refs)
    if metric == "micro_f1":
        return 2 * sum(tp.values()) / (sum(npred.values()) + sum(nref.values()))
    if metric == "weighted_f1":
        return sum(f1[c] * nref[c] for c in classes) / sum(nref.values())
    return sum(f1[c] for c in present) / len(present)


def recompute_claims(path: Path, keep: Iterable[tuple[int, str]] = ()) -> None:
    """Re-derive every claim of the CSV (observed_ids, ids_match, format_valid, quality_value,
    corpus_accepted, accepted_unique_corpora) and checks/set-check.json from the raw outputs,
    then rehash. `keep` lists (data row, column) cells to leave as they are (the lie a test
    wants the auditor to find)."""
    root = Path(path)
    manifest = read_json(root, "manifest.json")
    classes = manifest["task"]["classes"]
    qr = manifest["quality_rule"]
    expected = (root / "corpus/expected_ids.txt").read_text(encoding="utf-8").splitlines()
    exp_set = set(expected)
    refs = {r["id"]: r["label"] for r in read_jsonl(root, "corpus/references.jsonl")}
    rows = read_rows(root)
    keep = set(keep)
    passes = []
    accepted_variants: dict[str, set[str]] = {}
    for n, row in enumerate(rows, start=1):
        rel = f"outputs/{row['variant_id']}/{row['phase']}-{row['run_index']}.jsonl"
        p = root / rel
        text = p.read_bytes().decode("utf-8", errors="replace") if p.exists() else ""
        ids: list[str] = []
        preds: dict[str, str] = {}
        invalid: list[int] = []
        for ln, line in enumerate(
            text.split("\n")[:-1] if text.endswith("\n") else text.split("\n") if text else [],
            start=1,
        ):
            try:
                obj = json.loads(line)
            except ValueError:
                invalid.append(ln)
                continue
            if not isinstance(obj, dict):
                invalid.append(ln)
                continue
            i, lab = obj.get("id"), obj.get("label")
            if isinstance(i, str) and i:
                ids.append(i)
            if not (isinstance(i, str) and i and isinstance(lab, str) and lab in classes):
                invalid.append(ln)
                continue
            preds.setdefault(i, lab)
        seen: dict[str, int] = {}
        for i in ids:
            seen[i] = seen.get(i, 0) + 1
        dups = sorted(i for i, c in seen.items() if c > 1)
        missing = sorted(exp_set - set(ids))
        extra = sorted(set(ids) - exp_set)
        ids_match = not dups and not missing and not extra
        fmt = not invalid
        q = quality(
            {i: refs[i] for i in expected if i in refs},
            {i: lab for i, lab in preds.items() if i in exp_set},
            classes,
            qr["metric"],
        )
        q_ok = (
            q is not None
            and q >= qr["threshold"] - 1e-9
            and (q >= qr["reference"]["value"] - qr["tolerance"] - 1e-9)
        )
        acc = ids_match and fmt and q_ok
        if acc:
            accepted_variants.setdefault(row["variant_id"], set()).add(row["corpus_revision"])
        new = {
            "observed_ids": len(ids),
            "ids_match": ids_match,
            "format_valid": fmt,
            "quality_value": "" if q is None else round(q, 6),
            "corpus_accepted": acc,
        }
        for k, val in new.items():
            if (n, k) not in keep:
                row[k] = _cell(val)
        passes.append(
            {
                "variant_id": row["variant_id"],
                "phase": row["phase"],
                "run_index": int(row["run_index"]),
                "output_file": rel,
                "lines": len(text.splitlines()),
                "observed_ids": len(ids),
                "unique_ids": len(seen),
                "duplicate_ids": dups,
                "missing_ids": missing,
                "extra_ids": extra,
                "invalid_lines": invalid,
                "ids_match": ids_match,
                "format_valid": fmt,
                "quality_value": None if q is None else round(q, 6),
                "corpus_accepted": acc,
            }
        )
    for n, row in enumerate(rows, start=1):
        if (n, "accepted_unique_corpora") not in keep:
            row["accepted_unique_corpora"] = str(len(accepted_variants.get(row["variant_id"], ())))
    write_rows(root, rows)
    counts: dict[str, int] = {}
    for i in expected:
        counts[i] = counts.get(i, 0) + 1
    write_json(
        root,
        "checks/set-check.json",
        {
            "expected_file": "corpus/expected_ids.txt",
            "expected_count": len(expected),
            "expected_duplicates": sorted(i for i, c in counts.items() if c > 1),
            "passes": passes,
        },
    )
    rehash(root)


# -- editing a built run --------------------------------------------------------------------


def pass_row(rows: list[dict], variant: str, phase: str, run: int) -> dict:
    """The CSV row of one pass."""
    return next(
        r
        for r in rows
        if (r["variant_id"], r["phase"], r["run_index"]) == (variant, phase, str(run))
    )


def edit_rows(root: Path, fn: Callable[[list[dict]], None]) -> None:
    rows = read_rows(root)
    fn(rows)
    write_rows(root, rows)
    rehash(root)


def edit_json(root: Path, rel: str, fn: Callable[[dict], None], rehash: bool = True) -> None:
    doc = read_json(root, rel)
    fn(doc)
    write_json(root, rel, doc)
    if rehash:
        _rehash(root)


def edit_timeline(root: Path, fn: Callable[[list[dict]], None]) -> None:
    entries = read_jsonl(root, "timeline.jsonl")
    fn(entries)
    write_jsonl(root, "timeline.jsonl", entries)
    rehash(root)


def edit_output(root: Path, rel: str, fn: Callable[[list[dict]], list[dict] | None]) -> None:
    """Edit one output file in place (FN's result, if any, replaces its lines); not re-hashed:
    the caller recomputes the claims on it (`recompute_claims`), which re-hashes."""
    lines = read_jsonl(root, rel)
    out = fn(lines)
    write_jsonl(root, rel, lines if out is None else out)


def set_at(d: dict, path: str, value: object) -> None:
    """Set the value at PATH (`a/0/b`: keys, and indexes into lists) of a JSON document."""
    *head, last = path.split("/")
    for k in head:
        d = d[int(k)] if isinstance(d, list) else d[k]
    d[last] = value


def shift_iso(ts: str, seconds: float) -> str:
    """An RFC 3339 UTC instant SECONDS later (earlier when negative)."""
    t = datetime.fromisoformat(ts.replace("Z", "+00:00")) + timedelta(seconds=seconds)
    return t.isoformat().replace("+00:00", "Z")
