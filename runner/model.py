"""The run's model, for both protocols: the torch device asked for, the thread count, and
training the workload once on the train split into the run dir's `model/` (its files' hashes
are the model and tokenizer revisions)."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from runner.corpus import Corpus
from runner.errors import RunnerError
from runner.quiet import DEBUG_ENV
from runner.workloads import TrainingData, WorkloadFactory
from runner.workloads.base import PreparedModel


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
            raise RunnerError(
                f"config: device {name!r} asked for, but torch sees no CUDA "
                f"device (torch {torch.__version__})"
            )
        index = torch.cuda.current_device() if dev.index is None else dev.index
        if index >= torch.cuda.device_count():
            raise RunnerError(
                f"config: device {name!r}: only {torch.cuda.device_count()} CUDA device(s) visible"
            )
        return f"cuda:{index}"
    return str(dev)


def cpu_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Threads:
    """The intra-op threads of a configuration (a declared, recorded part of it, like the
    precision): torch's (`torch.set_num_threads`, every process that measures) and ONNX
    Runtime's (`SessionOptions.intra_op_num_threads`, protocol B's ORT policies). On a busy
    or small machine the count decides the time: a 2-layer BERT took 5.4 ms a text on one
    thread and 151 ms on two while another process held the second core."""

    torch: int
    onnxruntime: int | None
    source: dict[str, str]
    cpus_available: int

    def to_json(self) -> dict[str, Any]:
        return {
            "torch_intra_op": self.torch,
            "onnxruntime_intra_op": self.onnxruntime,
            "source": self.source,
            "cpus_available": self.cpus_available,
        }


def run_threads(
    factory: WorkloadFactory, declared: dict[str, int], *, onnxruntime: bool = False
) -> Threads:
    """The threads DECLARED in the config (`[threads]`), else the workload's default within
    what this process may use; torch's applied to this process. ONNX Runtime's default is
    torch's (one figure for both runtimes unless the config says otherwise)."""
    available = cpu_threads()
    source: dict[str, str] = {}
    if "torch" in declared:
        n_torch, source["torch"] = int(declared["torch"]), "config threads.torch"
    else:
        n_torch = max(1, min(available, factory.threads(available)))
        source["torch"] = f"the workload's default ({factory.name}, {available} CPU(s) usable)"
    n_ort = None
    if onnxruntime:
        if "onnxruntime" in declared:
            n_ort, source["onnxruntime"] = (
                int(declared["onnxruntime"]),
                "config threads.onnxruntime",
            )
        else:
            n_ort, source["onnxruntime"] = n_torch, "torch's (no threads.onnxruntime)"
    torch.set_num_threads(n_torch)
    return Threads(n_torch, n_ort, source, available)


def workload_threads(factory: WorkloadFactory) -> int:
    """The torch intra-op threads the workload asks for, within what this process may use;
    applied to this process."""
    return run_threads(factory, {}).torch


@dataclass(frozen=True)
class TrainedModel:
    prepared: PreparedModel
    model_dir: Path
    train_seconds: float


def train(
    factory: WorkloadFactory,
    corpus: Corpus,
    model_dir: Path,
    seed: int,
    context: int,
    options: dict[str, Any],
) -> TrainedModel:
    """Train or stage the model on the train split only (tune and eval stay unseen)."""
    tr = corpus.split("train")
    t = time.perf_counter()
    prepared = factory.prepare(
        TrainingData(tr["text"].to_list(), tr["label"].to_list(), corpus.classes),
        model_dir,
        seed,
        context,
        options,
    )
    return TrainedModel(prepared, model_dir, time.perf_counter() - t)


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a fresh `python -m runner...` process that must import what this
    one imports (a user's workload module included), plus `extra` variables. Libraries'
    warnings are silenced there from the interpreter's start, before torch is imported, as in
    this process (`runner.quiet`); RUNNER_DEBUG, passed on, shows them."""
    path = [p for p in sys.path if p and os.path.isdir(p)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), **extra}
    if not env.get(DEBUG_ENV):
        env["PYTHONWARNINGS"] = "ignore"
    return env
