"""Core ML policies (macOS): where they can run. The conversion and calibration of the
packages run on any OS (runner.b.coreml_convert); predictions, the compute plan and the
Neural Engine need macOS, so elsewhere a `coreml` policy is left out with the reason, as a
CUDA policy is on a machine without CUDA."""

from __future__ import annotations

import platform

from runner.b.config import PolicySpec

COMPUTE_UNITS = ("cpuAndNeuralEngine", "cpuOnly", "cpuAndGPU", "all")
"""Core ML's `MLComputeUnits`, as its Swift API names them."""


def availability(spec: PolicySpec) -> str | None:
    """None where Core ML predictions can run (macOS), else why not."""
    if platform.system() != "Darwin":
        return (f"Core ML predictions and MLComputePlan need macOS; this is "
                f"{platform.system()} {platform.release()}: the packages are converted and "
                "calibrated here, their prediction policies run on a Mac")
    return None
