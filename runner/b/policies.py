"""Compute policies at run time: where one model artifact runs (torch on a device, or the
ONNX export in ONNX Runtime with an execution provider).

`availability` says whether this machine has what a policy needs (for `when = "available"`);
`start` builds the running policy or raises `CannotStart` with the reason. ONNX Runtime
falls back to the CPU with only a warning when the provider asked for cannot run: after
creating the session the provider actually first in line is compared with the one asked for,
and a mismatch is a policy fault (`fault`), kept with the providers actually active; such a
policy is never measured as an accelerator result.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from runner.b.config import PolicySpec
from runner.errors import RunnerError
from runner.model import resolve_device
from runner.workloads import WorkloadFactory
from runner.workloads.base import TensorForm, Workload

CPU_PROVIDER = "CPUExecutionProvider"


class CannotStart(Exception):
    """The policy could not be started here; the message is the reason recorded."""


@dataclass(frozen=True)
class ModelFiles:
    """What policies load: the trained model and, when an ONNX Runtime policy is declared,
    its ONNX export."""

    factory: WorkloadFactory
    model_dir: Path
    context: int
    options: dict[str, Any]
    onnx_file: Path | None
    tensor_form: TensorForm | None
    threads: int


class RunningPolicy(ABC):
    """A started policy: classifies one prompt at a time (batch one, tokenization
    included), synchronizes its device, and names what it really runs on."""

    def __init__(self, spec: PolicySpec, device: str) -> None:
        self.spec = spec
        self.device = device
        """Where it runs: a torch device, or the first active execution provider."""
        self.fault: str | None = None
        """Set when the runtime does not run what was asked (a silent fallback)."""
        self.active: list[str] = [device]

    @abstractmethod
    def classify_one(self, text: str) -> str:
        """The label of one prompt."""

    def synchronize(self) -> None:  # noqa: B027 (a no-op unless the device is asynchronous)
        """Wait until the device has finished what was sent to it."""

    def close(self) -> None:  # noqa: B027
        """Release the session."""


class TorchPolicy(RunningPolicy):
    def __init__(self, spec: PolicySpec, device: str, workload: Workload) -> None:
        super().__init__(spec, device)
        self.workload = workload

    def classify_one(self, text: str) -> str:
        return self.workload.classify([text], 1)[0]

    def synchronize(self) -> None:
        if self.device.startswith("cuda"):
            torch.cuda.synchronize(self.device)


class OrtPolicy(RunningPolicy):
    def __init__(self, spec: PolicySpec, session: Any, form: TensorForm) -> None:
        self.session = session
        self.form = form
        active = list(session.get_providers())
        super().__init__(spec, active[0] if active else "none")
        self.active = active
        self.requested = requested_providers(spec)
        self.output = session.get_outputs()[0].name
        if not active or active[0] != spec.compute_units:
            self.fault = (
                f"requested {spec.compute_units}, but after session creation "
                f"ONNX Runtime runs {active or 'nothing'} (a silent fallback)"
            )

    def feed(self, texts: list[str]) -> dict[str, np.ndarray]:
        tensors = self.form.encode(texts)
        # the export named the graph's inputs after the tensor form's
        return {name: t.numpy() for name, t in zip(self.form.input_names, tensors, strict=True)}

    def classify_one(self, text: str) -> str:
        scores = self.session.run([self.output], self.feed([text]))[0]
        return self.form.classes[int(scores[0].argmax())]


def requested_providers(spec: PolicySpec) -> list[str]:
    """The provider asked for, then the CPU one ORT needs for what the first cannot run."""
    if spec.compute_units == CPU_PROVIDER:
        return [CPU_PROVIDER]
    return [spec.compute_units, CPU_PROVIDER]


def ort_module() -> Any:
    try:
        import onnxruntime
    except ImportError as exc:
        raise CannotStart(
            f"onnxruntime cannot be imported ({exc}); pip install onnxruntime "
            "(CPU) or onnxruntime-gpu"
        ) from None
    return onnxruntime


def availability(spec: PolicySpec) -> str | None:
    """None when this machine has the policy's device or provider, else why not."""
    if spec.runtime == "torch":
        if spec.compute_units == "cpu":
            return None
        try:
            resolve_device(spec.compute_units)
        except RunnerError as exc:
            return str(exc).removeprefix("config: ")
        return None
    try:
        ort = ort_module()
    except CannotStart as exc:
        return str(exc)
    have = ort.get_available_providers()
    if spec.compute_units not in have:
        return (
            f"this onnxruntime build ({ort.__version__}) has no {spec.compute_units} "
            f"(available: {', '.join(have)}); a GPU user installs onnxruntime-gpu"
        )
    if spec.compute_units == "TensorrtExecutionProvider" and not _tensorrt_installed():
        # onnxruntime-gpu lists the provider whether or not TensorRT itself is installed
        return (
            "onnxruntime lists TensorrtExecutionProvider, but TensorRT (libnvinfer) is "
            "not installed"
        )
    return None


def _tensorrt_installed() -> bool:
    import ctypes.util
    import importlib.util

    return (
        ctypes.util.find_library("nvinfer") is not None
        or importlib.util.find_spec("tensorrt_libs") is not None
        or importlib.util.find_spec("tensorrt") is not None
    )


def start(spec: PolicySpec, files: ModelFiles) -> RunningPolicy:
    """The running policy; `CannotStart` with the reason when it cannot run here."""
    if spec.runtime == "torch":
        try:
            device = resolve_device(spec.compute_units)
        except RunnerError as exc:
            raise CannotStart(str(exc).removeprefix("config: ")) from None
        try:
            workload = files.factory.load(
                files.model_dir, device, spec.precision, files.context, files.options
            )
        except Exception as exc:  # the workload says why it cannot load here
            raise CannotStart(
                f"the workload did not load on {device} in {spec.precision} "
                f"({type(exc).__name__}: {exc})"
            ) from None
        return TorchPolicy(spec, device, workload)
    if files.onnx_file is None or files.tensor_form is None:
        raise CannotStart(
            "the workload offers no tensor form, so there is no ONNX export "
            "to run (runner.workloads.base.Workload.tensor_form)"
        )
    return OrtPolicy(spec, ort_session(spec, files.onnx_file, files.threads), files.tensor_form)


def ort_session(
    spec: PolicySpec, onnx_file: Path, threads: int, *, profile_prefix: Path | None = None
) -> Any:
    """An InferenceSession with the policy's providers, recording the node assignment;
    with `profile_prefix`, a profiling session for the diagnostic pass."""
    ort = ort_module()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # the fallback is detected from get_providers()
    options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = str(profile_prefix)
    try:
        with warnings.catch_warnings():  # "Specified provider ... is not in available ..."
            warnings.simplefilter("ignore")
            session = ort.InferenceSession(
                str(onnx_file), options, providers=requested_providers(spec)
            )
    except Exception as exc:  # a provider that fails to load its libraries, say
        raise CannotStart(
            f"ONNX Runtime could not create a session with "
            f"{requested_providers(spec)} ({type(exc).__name__}: {exc})"
        ) from None
    return session
