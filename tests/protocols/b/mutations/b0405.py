"""ort-cuda's assignment record gains the raw ONNX Runtime profile it names (`profile_file`),
in which one Add node the record assigns to CUDAExecutionProvider ran on
CPUExecutionProvider: still above the floor, no compute operation moved, so only B0405 holds
a record to the raw evidence beside it."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"
PROFILE = "placement/ort-cuda.ort-profile.json"


def mutate(root: Path) -> None:
    nodes = list(br.ORT_GPU_NODES)
    nodes[5] = ("Add", "CPUExecutionProvider")
    (root / PROFILE).write_bytes(br.ort_profile(nodes))
    (root / "placement/ort-cuda.ort.json").write_bytes(
        br.ort_placement("ort-cuda", "CUDAExecutionProvider", profile_file=PROFILE)
    )
    br.rehash(root)


MUTATION = mutate
