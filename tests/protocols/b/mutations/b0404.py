"""The run is built with ort-cuda's Gemm nodes placed on the CPU provider, its share still above
the floor (so B0402 is quiet): only B0404 looks at where each compute operation ran."""

from __future__ import annotations

import b_runs as br

from ._helpers import build, synthetic_with

TEMPLATE = None  # the run is built from its own spec

#: ort-cuda's nodes as the synthetic run places them, but its Gemm on the CPU provider.
GEMM_ON_CPU = [
    (op, "CPUExecutionProvider" if op == "Gemm" else prov) for op, prov in br.ORT_GPU_NODES
]

MUTATION = build(
    synthetic_with(
        **{
            "ort-cuda": {
                "placement": (
                    ".ort.json",
                    br.ort_placement("ort-cuda", "CUDAExecutionProvider", GEMM_ON_CPU),
                )
            }
        }
    )
)
