"""A CPU run dressed as an H100 run: the environment and every row name an H100 that no pass's
device map holds (re-hashed); only A0404 holds the GPU model against the device maps."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    h100 = "NVIDIA H100 80GB HBM3"
    rf.edit_json(root, "environment.json", lambda e: rf.set_at(e, "gpu_model", h100))
    rf.edit_rows(root, lambda rows: [r.update(gpu_model=h100) for r in rows])


MUTATION = mutate
