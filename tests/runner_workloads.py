"""Test workloads and a tiny corpus for the runner's tests (imported by name from the test
configs as `runner_workloads:Faulty`, in the test process and in cold-pass processes).

`Faulty` is the default bag-of-words workload plus injected failures, chosen by options:
`fail = [{variant, phase, run_index, after_batches, kind}]` with kind `oom` (raises
`torch.OutOfMemoryError`), `error` (a RuntimeError) or `crash` (the process exits at once),
and `sleep_per_batch` seconds. `Degraded` answers like the default workload in float32 and
rotates every tenth label in float16: a protocol B candidate that fails the parity gate.
"""

from __future__ import annotations

import json
import os
import random
import time
import zlib
from pathlib import Path
from typing import Any

import torch

from runner.workloads.base import Workload
from runner.workloads.bow import BagOfWords, BagOfWordsWorkload

VOCAB = {
    "fruit": ["apple", "banana", "cherry", "grape", "mango", "peach", "pear", "plum"],
    "tools": ["hammer", "wrench", "saw", "drill", "chisel", "pliers", "spanner", "clamp"],
    "weather": ["rain", "snow", "storm", "cloud", "wind", "fog", "hail", "thunder"],
}
FILLER = ["the", "a", "of", "and", "with", "some", "very"]


class FaultyWorkload(BagOfWordsWorkload):
    def setup(self, options: dict[str, Any]) -> None:
        self.failures = options.get("fail", [])
        self.sleep = float(options.get("sleep_per_batch", 0.0))
        self.current: dict[str, Any] | None = None
        self.batches = 0

    def begin_pass(self, variant_id: str, phase: str, run_index: int) -> None:
        self.batches = 0
        self.current = next(
            (
                f
                for f in self.failures
                if f["variant"] == variant_id
                and f["phase"] == phase
                and f["run_index"] == run_index
            ),
            None,
        )

    def classify(self, texts: list[str], batch: int) -> list[str]:
        if self.sleep:
            time.sleep(self.sleep)
        if self.current and self.batches >= self.current["after_batches"]:
            if self.current["kind"] == "crash":  # the process dies without a word
                os._exit(3)
            if self.current["kind"] == "oom":
                raise torch.OutOfMemoryError(
                    "CUDA out of memory. Tried to allocate 2.00 GiB (injected by the test workload)"
                )
            raise RuntimeError("injected failure from the test workload")
        self.batches += 1
        return super().classify(texts, batch)


class Faulty(BagOfWords):
    name = "faulty-bow"

    def load(
        self, model_dir: Path, device: str, precision: str, context: int, options: dict[str, Any]
    ) -> Workload:
        base = super().load(model_dir, device, precision, context, options)
        assert isinstance(base, BagOfWordsWorkload)
        w = FaultyWorkload(base.model, base.tokenizer, base.classes, base.device)
        w.setup(options)
        return w


def tiny_rows(
    n_train: int = 60, n_tune: int = 30, n_eval: int = 40, seed: int = 7
) -> list[dict[str, str]]:
    """A corpus any bag-of-words model learns perfectly: each class has its own words."""
    rng = random.Random(seed)
    rows = []
    labels = sorted(VOCAB)
    for split, n in (("train", n_train), ("tune", n_tune), ("eval", n_eval)):
        for i in range(n):
            label = labels[i % len(labels)]
            words = rng.choices(VOCAB[label], k=6) + rng.choices(FILLER, k=3)
            rng.shuffle(words)
            rows.append(
                {"id": f"{split}-{i:04d}", "text": " ".join(words), "label": label, "split": split}
            )
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


class DegradedWorkload(BagOfWordsWorkload):
    """Answers like the float32 model, except the label of every `every`-th distinct prompt
    (chosen by a hash of its text) is rotated to the next class: a candidate whose
    agreement with the reference is about 1 - 1/every, deterministically."""

    every = 10

    def classify(self, texts: list[str], batch: int) -> list[str]:
        labels = super().classify(texts, batch)
        out = []
        for text, label in zip(texts, labels, strict=True):
            if zlib.crc32(text.encode()) % self.every == 0:
                label = self.classes[(self.classes.index(label) + 1) % len(self.classes)]
            out.append(label)
        return out


class Degraded(BagOfWords):
    """The default workload; in `float16` (the candidate's precision) it is degraded as
    `DegradedWorkload` says, so a B8 gate really rejects it."""

    name = "degraded-bow"

    def load(
        self, model_dir: Path, device: str, precision: str, context: int, options: dict[str, Any]
    ) -> Workload:
        base = super().load(model_dir, device, precision, context, options)
        if precision != "float16":
            return base
        assert isinstance(base, BagOfWordsWorkload)
        w = DegradedWorkload(base.model, base.tokenizer, base.classes, base.device)
        w.every = int(options.get("degrade_every", 10))
        return w
