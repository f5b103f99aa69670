"""Core ML policies (macOS): one converted package (runner.b.coreml_convert) run under the
policy's compute units, batch one, tokenization included; its placement from MLComputePlan.

- Where: predictions, the compute plan and the Neural Engine need macOS; elsewhere a `coreml`
  policy is left out with the reason (`availability`), as a CUDA policy is on a machine
  without CUDA. The packages are converted and calibrated on any OS.
- The package a policy runs is `package` (`w8a8` by default, or `float16`); its revision is
  the package SHA-256 recorded at conversion, which the gates file and the manifest record
  as the policy's artifact. A package whose files no longer hash to it is not the one gated.
- Predictions: `coremltools.models.MLModel(package, compute_units=...)`, the class scores of
  the package's first output (`load_predictor`; the tests stand in a predictor that answers
  from the package's ONNX twin).
- Placement (`compute_plan`): `MLComputePlan` of the compiled model under the policy's
  compute units, each ML Program operation with its preferred device and estimated cost,
  written as the MLComputePlan log the auditor reads (`placement/<policy_id>.computeplan.log`:
  the compiled model's path, then `operation <op>, device <MLxxxComputeDevice: 0x0>, cost
  <weight>%` per operation)."""

from __future__ import annotations

import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from runner.b.config import PolicySpec
from runner.b.policies import CannotStart, RunningPolicy
from runner.workloads.base import TensorForm

COMPUTE_UNITS = {
    "cpuAndNeuralEngine": "CPU_AND_NE",
    "cpuOnly": "CPU_ONLY",
    "cpuAndGPU": "CPU_AND_GPU",
    "all": "ALL",
}
"""Core ML's `MLComputeUnits` as its Swift API names them -> coremltools' ComputeUnit."""

Predictor = Callable[[dict[str, np.ndarray]], np.ndarray]


def availability(spec: PolicySpec) -> str | None:
    """None where Core ML predictions can run (macOS), else why not."""
    if platform.system() != "Darwin":
        return (
            f"Core ML predictions and MLComputePlan need macOS; this is "
            f"{platform.system()} {platform.release()}: the packages are converted and "
            "calibrated here, their prediction policies run on a Mac"
        )
    return None


def load_predictor(package: Path, compute_units: str) -> Predictor:
    """The package's predictions under COMPUTE_UNITS (macOS)."""
    import coremltools as ct

    model = ct.models.MLModel(
        str(package), compute_units=getattr(ct.ComputeUnit, COMPUTE_UNITS[compute_units])
    )
    out = model.get_spec().description.output[0].name
    return lambda feed: np.asarray(model.predict(feed)[out])


class CoremlPolicy(RunningPolicy):
    def __init__(
        self,
        spec: PolicySpec,
        package: Path,
        predictor: Predictor,
        encode: Callable[[str], dict[str, np.ndarray]],
        classes: list[str],
    ) -> None:
        super().__init__(spec, spec.compute_units)
        self.package = package
        self.predictor = predictor
        self.encode = encode
        self.classes = classes

    def classify_one(self, text: str) -> str:
        scores = np.asarray(self.predictor(self.encode(text))).reshape(-1)
        return self.classes[int(scores.argmax())]


def start(
    spec: PolicySpec, root: Path, packages: list[dict[str, Any]], form: TensorForm
) -> tuple[CoremlPolicy, tuple[str, str]]:
    """The running policy and its artifact (package path, package SHA-256)."""
    from runner.b.coreml_convert import input_encoder

    name = spec.package or "w8a8"
    entry = next((p for p in packages if p["name"] == name), None)
    if entry is None or entry.get("status") != "converted":
        raise CannotStart(
            f"the Core ML package {name} was not converted"
            + (f" ({entry.get('reason')})" if entry else "")
        )
    path = root / entry["package"]
    try:
        predictor = load_predictor(path, spec.compute_units)
    except Exception as exc:  # coremltools refuses the package, or Core ML is absent
        raise CannotStart(
            f"Core ML could not load {entry['package']} ({type(exc).__name__}: {exc})"
        ) from None
    policy = CoremlPolicy(spec, path, predictor, input_encoder(form), form.classes)
    return policy, (entry["package"], entry["package_sha256"])


def compute_plan(policy: CoremlPolicy) -> str:
    """The MLComputePlan log of the policy's package under its compute units (macOS)."""
    import coremltools as ct
    from coremltools.models.compute_plan import MLComputePlan

    model = ct.models.MLModel(
        str(policy.package),
        compute_units=getattr(ct.ComputeUnit, COMPUTE_UNITS[policy.spec.compute_units]),
    )
    compiled = model.get_compiled_path()
    plan = MLComputePlan.load_from_path(
        compiled, compute_units=getattr(ct.ComputeUnit, COMPUTE_UNITS[policy.spec.compute_units])
    )
    name = policy.package.name.removesuffix(".mlpackage")
    lines = [f"the mlmodelc directory: file:///{name}.mlmodelc/", "ML Program"]
    program = plan.model_structure.program
    for op in program.functions["main"].block.operations if program else []:
        usage = plan.get_compute_device_usage_for_mlprogram_operation(op)
        cost = plan.get_estimated_cost_for_mlprogram_operation(op)
        device = type(usage.preferred_compute_device).__name__ if usage else "unknown"
        weight = f"{cost.weight * 100:.4f}%" if cost else "n/a"
        lines.append(f"operation {op.operator_name}, device <{device}: 0x0>, cost {weight}")
    return "\n".join(lines) + "\n"
