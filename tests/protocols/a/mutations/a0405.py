"""Two GPUs used under one lot of a one-GPU offer, every file consistent (placement evidence,
environment and rows agree, so A0402 is quiet): only A0405 holds the GPUs used against the lots
billed."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cuda"


def mutate(root: Path) -> None:
    name = rf.read_json(root, "environment.json")["gpu_model"]
    for p in sorted((root / "evidence/placement").rglob("*.json")):
        rf.edit_json(
            root,
            p.relative_to(root).as_posix(),
            lambda d: d.update(
                input_devices={"cuda:0": 4, "cuda:1": 4},
                gpus_visible=2,
                gpus_used=[{"index": 0, "name": name}, {"index": 1, "name": name}],
            ),
            rehash=False,
        )
    rf.edit_json(
        root, "environment.json", lambda e: e.update(gpu_count=2, gpus_visible=2), rehash=False
    )
    rf.edit_rows(root, lambda rows: [r.update(gpu_count="2") for r in rows])


MUTATION = mutate
