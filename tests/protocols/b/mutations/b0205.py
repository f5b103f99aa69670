"""The environment snapshot lists another process holding the GPU when the run started
(NVML), every other file as it was: only B0205 reads who else was on the accelerator."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    br.edit_json(
        root,
        "environment.json",
        lambda env: env.setdefault(
            "concurrent_load", {"loadavg_before": [0.1, 0.1, 0.1], "loadavg_after": [0.1, 0.1, 0.1]}
        ).update(gpu_processes=[{"pid": 4242, "name": "python", "used_gpu_memory": 2147483648}]),
    )


MUTATION = mutate
