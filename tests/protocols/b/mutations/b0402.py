"""The run is built with ort-cuda's ONNX Runtime record showing it fell back to the CPU
provider, the policy honestly rejected: only B0402 reads the active provider."""

from __future__ import annotations

import b_runs as br

from ._helpers import build, synthetic_with

TEMPLATE = None  # the run is built from its own spec

MUTATION = build(
    synthetic_with(
        **{
            "ort-cuda": {
                "verdict": "rejected",
                "placement": (
                    ".ort.json",
                    br.ort_placement(
                        "ort-cuda", "CUDAExecutionProvider", active="CPUExecutionProvider"
                    ),
                ),
            }
        }
    )
)
