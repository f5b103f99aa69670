"""The synthetic run's manifest declares one torch and one ONNX Runtime intra-op thread, and
ort-cuda's placement record says its session ran with four (re-sealed): only B0110 holds the
threads a session ran with to the declared ones."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

from ._helpers import edit_manifest

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    edit_manifest(
        root, lambda m: m.update(threads={"torch_intra_op": 1, "onnxruntime_intra_op": 1})
    )
    br.edit_json(
        root,
        "placement/ort-cuda.ort.json",
        lambda d: d.update(session_options={"intra_op_num_threads": 4, "inter_op_num_threads": 1}),
    )


MUTATION = mutate
