"""The protocol A run configuration: a TOML file validated against
`schemas/run-config.schema.json`, or the embedded default (`runner/defaults/default.toml`, the
`make demo` run).

Keys a user file leaves out take the base defaults below; `economics` is never borrowed from
the default (a user run names its own offer or none). Relative paths in a file are resolved
against that file's folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import schemas
from runner.config import experiment_id_from, load, merge, read_toml, resolve_path
from runner.conformance import Break
from runner.errors import RunnerError

DEFAULT_CONFIG_NAME = "default.toml"

#: Values for keys a user config leaves out (the same as the embedded default run).
BASE: dict[str, Any] = {
    "seed": 20260924,
    "device": "auto",
    "notes": "",
    "workload": {"callable": "runner.workloads.bow:BagOfWords", "options": {}},
    "variants": {
        "announced_variable": "batch",
        "batches": [1, 4, 8],
        "precision": "float32",
        "context": 64,
    },
    "passes": {"warmup_iterations": 10, "warm_passes": 5, "timer_scope": "full_chain"},
    "quality": {"metric": "macro_f1", "threshold": "from_tune", "tolerance": 0.10},
}


@dataclass(frozen=True)
class Economics:
    offers_file: Path
    offer_id: str
    lots: int


@dataclass(frozen=True)
class RunConfig:
    """The run asked for, every default applied; fixed before anything is measured."""

    source: str
    """Where the config came from: a file path, or 'embedded default'."""
    experiment_id: str
    seed: int
    device: str
    notes: str
    corpus_path: Path | None
    eval_size: int | None
    max_texts: int | None
    workload_callable: str
    workload_options: dict[str, Any]
    batches: tuple[int, ...]
    precision: str
    context: int
    warmup_iterations: int
    warm_passes: int
    timer_scope: str
    metric: str
    threshold: float | str
    tolerance: float
    economics: Economics | None
    base_dir: Path = Path(".")
    """The config file's folder: relative paths (a workload's `path_options` too) start there."""
    off_protocol: bool = False
    threads: dict[str, int] = field(default_factory=dict)
    """`[threads]`: the intra-op threads the config declares (`torch`, and `onnxruntime` for
    protocol B); empty: the workload's default (runner.model.run_threads)."""
    """`runner execute --off-protocol`: a diagnostic run, allowed to break the protocol."""

    @property
    def variant_ids(self) -> tuple[str, ...]:
        return tuple(f"batch-{b}" for b in self.batches)


#: Protocol A's fixed numbers a configuration can break (docs/protocol.md).
WARM_PASSES = schemas.convention("A", "warm_passes_per_variant")


def protocol_breaks(cfg: RunConfig) -> list[Break]:
    """The settings of CFG that break protocol A (`runner.conformance`): A6.1 fixes five
    measured warm passes per variant, after the announced warm-up. The evaluation corpus's
    1,000 texts are the source's example, not a rule (A6.3: every size is audited alike)."""
    out = []
    if cfg.warm_passes != WARM_PASSES:
        out.append(
            Break("A6.1", "five warm passes per variant", "passes.warm_passes", cfg.warm_passes)
        )
    if cfg.warmup_iterations < 1:
        out.append(
            Break(
                "A6.1",
                "the announced warm-up runs before the warm passes (at "
                "least one warm-up batch per variant)",
                "passes.warmup_iterations",
                cfg.warmup_iterations,
            )
        )
    return out


def load_config(path: Path | None) -> RunConfig:
    """Read, validate and complete a config; `None` means the embedded default."""
    return load(path, DEFAULT_CONFIG_NAME, _from_file)


def _from_file(path: Path, label: str) -> RunConfig:
    raw = read_toml(path, "run_config")
    base_dir = path.resolve().parent
    merged = merge(BASE, raw)
    corpus = raw.get("corpus", {})
    q = merged["quality"]
    threshold = q["threshold"]
    if isinstance(threshold, str) and threshold != "from_tune":
        raise RunnerError(
            f"config file {path}: quality.threshold must be a number or "
            f'"from_tune", not {threshold!r}'
        )
    if not isinstance(threshold, str) and not 0 <= threshold <= 1:
        raise RunnerError(f"config file {path}: quality.threshold {threshold} is outside [0, 1]")
    eco = raw.get("economics")
    economics = None
    if eco is not None:
        missing = [k for k in ("offers_file", "offer_id", "lots") if k not in eco]
        if missing:
            raise RunnerError(f"config file {path}: [economics] needs {', '.join(missing)}")
        economics = Economics(
            resolve_path(base_dir, eco["offers_file"]), eco["offer_id"], eco["lots"]
        )
    v, p = merged["variants"], merged["passes"]
    return RunConfig(
        source=label,
        experiment_id=raw.get("experiment_id") or experiment_id_from(path),
        seed=merged["seed"],
        device=merged["device"],
        notes=merged["notes"],
        corpus_path=resolve_path(base_dir, corpus["path"]) if "path" in corpus else None,
        eval_size=corpus.get("eval_size"),
        max_texts=corpus.get("max_texts"),
        workload_callable=merged["workload"]["callable"],
        workload_options=dict(merged["workload"].get("options", {})),
        batches=tuple(v["batches"]),
        precision=v["precision"],
        context=v["context"],
        warmup_iterations=p["warmup_iterations"],
        warm_passes=p["warm_passes"],
        timer_scope=p["timer_scope"],
        metric=q["metric"],
        threshold=threshold,
        tolerance=float(q["tolerance"]),
        economics=economics,
        base_dir=base_dir,
        threads=dict(raw.get("threads", {})),
    )
