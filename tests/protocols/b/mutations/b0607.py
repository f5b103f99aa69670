"""cpu trial 1's NVML power samples vary around the draw (their mean kept, as a live trace's
do); cpu trial 2's trace is then trial 1's, every time moved onto trial 2's window: the same
readings under other times, every figure claimed still right. Only B0607 compares the
traces' readings."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def _records(root: Path, rel: str) -> list[dict]:
    return [json.loads(x) for x in (root / rel).read_text(encoding="utf-8").splitlines()]


def mutate(root: Path) -> None:
    one = _records(root, "power/cpu/trial-1.jsonl")
    samples = [r for r in one if r["kind"] == "sample"]
    for i, r in enumerate(samples):
        r["watts"] = round(r["watts"] + (i % 11 - 5) * 0.1, 3)
    two = _records(root, "power/cpu/trial-2.jsonl")
    shift = datetime.fromisoformat(two[0]["t"]) - datetime.fromisoformat(one[0]["t"])
    moved = [
        {
            **r,
            "t": br.iso(datetime.fromisoformat(r["t"]) + shift),
            **({"label": two[0]["label"]} if r["kind"] == "marker" else {}),
        }
        for r in one
    ]
    for rel, recs in (("power/cpu/trial-1.jsonl", one), ("power/cpu/trial-2.jsonl", moved)):
        (root / rel).write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    br.rehash(root)


MUTATION = mutate
