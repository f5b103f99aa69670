"""The run is built with the CPU baseline's NVML energy counter doubled, its claims recomputed
from it (the accelerators the cheaper for it), while the POWER_INSTANT samples of the same trace
still say 30 W: only B0605 holds a counter against the power samples beside it."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import b_runs as br

TEMPLATE = None  # the run is built from its own spec


def mutate(root: Path) -> None:
    def trace(spec: br.Spec, w: br.Window) -> tuple[str, bytes]:
        ext, data = br.runner_trace(spec, w)
        if w.policy_id != "cpu":
            return ext, data
        recs = [json.loads(x) for x in data.decode().splitlines()]
        nvml = [r for r in recs if r["kind"] == "counter" and r["source"] == "nvml"]
        for r in nvml:
            r["value"] *= 2
        w.energy_j = (w.energy_j or 0.0) + (nvml[-1]["value"] - nvml[0]["value"]) / 2e3
        return ext, "".join(json.dumps(r) + "\n" for r in recs).encode()

    shutil.rmtree(root)
    br.build(root, replace(br.synthetic_spec(), trace=trace))


MUTATION = mutate
