"""cpu trial 2's answers and latencies are trial 1's, shuffled (its p95 claims recomputed from
them, so every figure claimed stays right): only B0305 compares the trials' latencies."""

from __future__ import annotations

import json
from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    lines = (root / "outputs/cpu/trial-1.jsonl").read_text(encoding="utf-8").splitlines()
    lats = [json.loads(x)["latency_ms"] for x in lines]
    shuffled = lats[7:] + lats[:7]
    br.edit_jsonl(
        root,
        "outputs/cpu/trial-2.jsonl",
        lambda rows: [{**r, "latency_ms": v} for r, v in zip(rows, shuffled, strict=True)],
    )
    every = [
        json.loads(x)["latency_ms"]
        for k in range(1, 6)
        for x in (root / f"outputs/cpu/trial-{k}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    br.edit_csv(
        root,
        "trials.csv",
        lambda rows: br.row(rows, "cpu", 2).update(
            p95_latency_ms=br.num(br.nearest_rank(shuffled))
        ),
    )
    br.edit_csv(
        root,
        "policies.csv",
        lambda rows: br.row(rows, "cpu").update(p95_latency_ms=br.num(br.nearest_rank(every))),
    )


MUTATION = mutate
