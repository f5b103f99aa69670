"""How much the runner's pass machinery adds to a pass: side by side in one process, the same
workload (the default bag-of-words model on the default corpus's 1,000 evaluation texts) and
the same batch, interleaved repetitions, medians and their ratio.

1. processing_only: the elapsed time `run_pass` records vs a bare loop of `classify` calls
   (classify and nothing else); the aim is <= 1.02 at batch 1. Two decomposition rows show
   where a difference comes from: the per-call timer alone (the instrumentation proper), and
   the timer with the answers written between calls (a pass writes its output, which leaves
   the next classify call with colder caches: the chain's cost, not the timer's).
2. full_chain (the default timer scope): `run_pass`'s elapsed vs a bare loop that reads the
   same inputs file, classifies and writes the same JSONL lines, without the runner.
3. For information: the wall time of the whole `run_pass` call (memory probe, trace and
   placement files included, which sit outside the timed region) vs the bare chain.

Usage: .venv/bin/python bench/runner_overhead.py [--reps 9] [--batches 1,4,8]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch

from runner.a.passes import INPUTS_FILE, PassSpec, run_pass
from runner.corpus import load_corpus
from runner.workloads.base import TrainingData, Workload
from runner.workloads.bow import BagOfWords


def bare_classify(workload: Workload, texts: list[str], batch: int) -> float:
    t0 = time.perf_counter()
    for i in range(0, len(texts), batch):
        workload.classify(texts[i : i + batch], batch)
    return time.perf_counter() - t0


def timed_classify(
    workload: Workload, texts: list[str], batch: int, out: Path | None = None
) -> float:
    """The runner's processing_only timer alone (a clock read around each call), and, with
    `out`, writing the answers between calls as a pass does, but without the runner."""
    total = 0.0
    f = open(out, "w", encoding="utf-8") if out else None  # noqa: SIM115
    for i in range(0, len(texts), batch):
        t = time.perf_counter()
        labels = workload.classify(texts[i : i + batch], batch)
        total += time.perf_counter() - t
        if f:
            f.write("".join(json.dumps({"id": str(i), "label": lab}) + "\n" for lab in labels))
    if f:
        f.close()
    return total


def bare_chain(workload: Workload, inputs: Path, out: Path, batch: int) -> float:
    t0 = time.perf_counter()
    ids, texts = [], []
    with open(inputs, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            ids.append(row["id"])
            texts.append(row["text"])
    with open(out, "w", encoding="utf-8") as f:
        for i in range(0, len(texts), batch):
            labels = workload.classify(texts[i : i + batch], batch)
            f.write(
                "".join(
                    json.dumps({"id": k, "label": lab}) + "\n"
                    for k, lab in zip(ids[i : i + batch], labels, strict=True)
                )
            )
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--batches", default="1,4,8")
    args = ap.parse_args()
    torch.set_num_threads(1)  # as the runner does for this workload
    corpus = load_corpus(None, 1000, None, seed=20260924)
    train, ev = corpus.split("train"), corpus.split("eval")
    with tempfile.TemporaryDirectory(prefix="runner-bench-") as d:
        root = Path(d)
        factory = BagOfWords()
        opts = {"epochs": 5}  # accuracy is not measured here, only time
        factory.prepare(
            TrainingData(train["text"].to_list(), train["label"].to_list(), corpus.classes),
            root / "model",
            1,
            128,
            opts,
        )
        w = factory.load(root / "model", "cpu", "float32", 128, opts)
        (root / "corpus").mkdir()
        (root / INPUTS_FILE).write_text(
            "".join(
                json.dumps(r, ensure_ascii=False) + "\n" for r in ev.select("id", "text").to_dicts()
            ),
            encoding="utf-8",
        )
        texts = ev["text"].to_list()
        print(
            f"runner overhead, bag-of-words on {len(texts)} texts, {args.reps} interleaved "
            "repetitions each, medians in ms (torch threads 1)"
        )
        print(
            f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs "
            "(other processes make medians noisy; the minimums show the floor)"
        )
        print(
            f"{'batch':>5}  {'comparison':<46} {'bare':>8} {'runner':>8} {'ratio':>6}"
            f"  {'min bare':>8} {'min run':>8} {'ratio':>6}"
        )
        for batch in (int(b) for b in args.batches.split(",")):
            for _ in range(2):  # warm-up of this batch shape, as the protocol does
                bare_classify(w, texts, batch)
            proc = PassSpec(0, f"batch-{batch}", "warm", 1, batch, "cpu", "processing_only")
            full = PassSpec(0, f"batch-{batch}", "warm", 2, batch, "cpu", "full_chain")
            series: dict[str, list[float]] = {
                k: [] for k in ("bare", "timer", "timer+write", "proc", "chain", "full", "wall")
            }
            for _ in range(args.reps):
                series["bare"].append(bare_classify(w, texts, batch))
                series["timer"].append(timed_classify(w, texts, batch))
                series["timer+write"].append(timed_classify(w, texts, batch, root / "timed.jsonl"))
                series["proc"].append(
                    run_pass(w, proc, root, fresh_process=False)["entry"]["elapsed_seconds"]
                )
                series["chain"].append(
                    bare_chain(w, root / INPUTS_FILE, root / "bare.jsonl", batch)
                )
                t0 = time.perf_counter()
                series["full"].append(
                    run_pass(w, full, root, fresh_process=False)["entry"]["elapsed_seconds"]
                )
                series["wall"].append(time.perf_counter() - t0)
            rows = (
                ("processing_only elapsed vs bare classify loop", "bare", "proc"),
                ("  of which: the per-call timer alone", "bare", "timer"),
                ("  of which: timer + writing between calls", "bare", "timer+write"),
                ("full_chain elapsed vs bare read+classify+write", "chain", "full"),
                ("whole run_pass call (wall) vs bare chain", "chain", "wall"),
            )
            for label, base, mine in rows:
                mb, mr = statistics.median(series[base]), statistics.median(series[mine])
                lb, lr = min(series[base]), min(series[mine])
                print(
                    f"{batch:>5}  {label:<46} {mb * 1e3:>8.2f} {mr * 1e3:>8.2f} "
                    f"{mr / mb:>6.3f}  {lb * 1e3:>8.2f} {lr * 1e3:>8.2f} {lr / lb:>6.3f}"
                )
        print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
