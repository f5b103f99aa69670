"""The run is built with a second CPU-only policy, ort-cpu, a candidate (honestly rejected) for
a deep-tier model: only B0501 allows no CPU-only candidate but the baseline."""

from __future__ import annotations

from dataclasses import replace

import b_runs as br

from ._helpers import build

TEMPLATE = None  # the run is built from its own spec

#: A second CPU-only policy, a candidate rather than the diagnostic baseline.
ORT_CPU = br.Pol(
    "ort-cpu",
    "cpu-only",
    "onnxruntime",
    "CPUExecutionProvider",
    latency_ms=1.6,
    wall_s=1.8,
    watts={"rapl": 38.0, "nvml": 30.0},
    verdict="rejected",
)

MUTATION = build(replace(br.synthetic_spec(), policies=[*br.synthetic_spec().policies, ORT_CPU]))
