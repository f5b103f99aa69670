"""The run is built with torch-cuda drawing 60 W on NVML and 15 W on RAPL, more than the CPU
baseline, the policy honestly rejected: only B0701 compares a policy's power and energy with the
baseline's."""

from __future__ import annotations

from ._helpers import build, synthetic_with

TEMPLATE = None  # the run is built from its own spec

MUTATION = build(
    synthetic_with(**{"torch-cuda": {"verdict": "rejected", "watts": {"rapl": 15.0, "nvml": 60.0}}})
)
