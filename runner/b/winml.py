"""Windows ML policies: ONNX Runtime's execution-provider device selection, the mechanism
Windows ML is built on, with ahead-of-time compilation (docs/run-dir-residency.md).

A `windows-ml` policy names either a selection policy (`compute_units = "MAX_EFFICIENCY"`,
`PREFER_NPU`, ...: `SessionOptions.set_provider_selection_policy`) or one execution provider
bound to its devices (`compute_units = "QNNExecutionProvider"`, optionally `device_type`:
`SessionOptions.add_provider_for_devices` over `onnxruntime.get_ep_devices()`, an explicit
session as Windows ML appends one). Plug-in provider libraries (QNN, OpenVINO,
NvTensorRT-RTX, MIGraphX as Windows ML downloads them) are registered by path first
(`onnxruntime.register_execution_provider_library`).

Start: the ONNX export is compiled ahead of time with the policy's session options
(`onnxruntime.ModelCompiler`, EPContext nodes embedded) into `model/compiled/<policy_id>.onnx`;
the session that runs the gates and trials is created on the compiled model with the same
options; then what ONNX Runtime itself assigned is read back: the active providers
(`get_providers`), the device of each (the session's input EP device, else the provider's
devices in `get_ep_devices`), and the provider of every node
(`get_provider_graph_assignment_info`). Where the assignment contradicts the role (an
accelerator policy whose first device is the CPU, a cpu-only one that landed on an NPU or GPU,
an explicit provider that is not the one running) the policy is at fault, as ONNX Runtime's
silent fallback is. The record is `placement/<policy_id>.winml.json`
(schemas/windows-ml-placement.schema.json)."""

from __future__ import annotations

import platform
import time
import warnings
from pathlib import Path
from typing import Any

from runner.b.config import SELECTION_POLICIES, PolicySpec
from runner.b.energy.base import now_utc
from runner.b.policies import CannotStart, ModelFiles, OrtPolicy, ort_module
from runner.revisions import file_sha256

RUNTIME = "windows-ml"
ACCELERATOR_TYPES = ("NPU", "GPU")
COMPILED_DIR = "model/compiled"


def is_selection(units: str) -> bool:
    return units.upper() in SELECTION_POLICIES


def register_plugins(libraries: dict[str, Path]) -> list[dict[str, Any]]:
    """Register each plug-in EP library by path; what happened to each, for the record."""
    out: list[dict[str, Any]] = []
    if not libraries:
        return out
    ort = ort_module()
    for name, path in libraries.items():
        try:
            ort.register_execution_provider_library(name, str(path))
            out.append({"name": name, "path": str(path), "registered": True, "error": None})
        except Exception as exc:  # a missing DLL, a library registered twice
            already = "already registered" in str(exc).lower()
            out.append(
                {
                    "name": name,
                    "path": str(path),
                    "registered": already,
                    "error": None if already else f"{type(exc).__name__}: {exc}",
                }
            )
    return out


def _device_json(d: Any) -> dict[str, Any]:
    hw = d.device
    out: dict[str, Any] = {
        "execution_provider": d.ep_name,
        "ep_vendor": d.ep_vendor,
        "device_type": hw.type.name,
        "device_vendor_id": int(hw.vendor_id),
        "device_id": int(hw.device_id),
    }
    if hw.vendor:
        out["device_vendor"] = hw.vendor
    name = dict(hw.metadata).get("Description") or dict(hw.metadata).get("DeviceName")
    if name:
        out["device_name"] = name
    return out


def ep_devices() -> list[dict[str, Any]]:
    """Every (execution provider, hardware device) pair ONNX Runtime offers here."""
    return [_device_json(d) for d in ort_module().get_ep_devices()]


def _matching(spec: PolicySpec, devices: list[Any]) -> list[Any]:
    """The EP devices an explicit policy binds: its provider's, of its device type."""
    return [
        d
        for d in devices
        if d.ep_name == spec.compute_units
        and (spec.device_type is None or d.device.type.name == spec.device_type)
    ]


def availability(spec: PolicySpec) -> str | None:
    """None when ONNX Runtime offers what the policy needs here, else why not."""
    try:
        devices = ep_devices()
    except CannotStart as exc:
        return str(exc)
    except AttributeError:
        return (
            f"this onnxruntime ({ort_module().__version__}) has no get_ep_devices: the "
            "EP device selection needs ONNX Runtime 1.22 or later"
        )
    offered = ", ".join(f"{d['execution_provider']}/{d['device_type']}" for d in devices)
    if is_selection(spec.compute_units):
        accel = any(d["device_type"] in ACCELERATOR_TYPES for d in devices)
        if spec.role == "accelerator" and not accel:
            return (
                f"ONNX Runtime offers no NPU or GPU device here (get_ep_devices: "
                f"{offered}), so {spec.compute_units} can only choose the CPU; register "
                "the vendor's plug-in provider library ([windows_ml] plugin_libraries)"
            )
        if spec.role == "cpu-only" and accel:
            return (
                f"ONNX Runtime offers an NPU or GPU device here (get_ep_devices: "
                f"{offered}): {spec.compute_units} is declared cpu-only for a machine "
                "without one (the accelerator policy of the same selection runs instead)"
            )
        return None
    if not _matching(spec, list(ort_module().get_ep_devices())):
        kind = f" on a {spec.device_type} device" if spec.device_type else ""
        return f"ONNX Runtime offers no {spec.compute_units}{kind} here (get_ep_devices: {offered})"
    return None


def session_options(spec: PolicySpec, threads: int) -> Any:
    ort = ort_module()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    if is_selection(spec.compute_units):
        options.set_provider_selection_policy(
            getattr(ort.OrtExecutionProviderDevicePolicy, spec.compute_units.upper())
        )
    else:
        devices = _matching(spec, list(ort.get_ep_devices()))
        if not devices:
            raise CannotStart(f"ONNX Runtime offers no {spec.compute_units} device here")
        options.add_provider_for_devices(devices, {})
    return options


class WinmlPolicy(OrtPolicy):
    """A session created on the ahead-of-time compiled model, with what ONNX Runtime
    assigned (`record`)."""

    def __init__(
        self,
        spec: PolicySpec,
        session: Any,
        files: ModelFiles,
        compilation: dict[str, Any],
        plugins: list[dict[str, Any]],
    ) -> None:
        assert files.tensor_form is not None
        super().__init__(spec, session, files.tensor_form)
        self.compilation = compilation
        self.plugins = plugins
        self.assigned = _assigned(session, self.active)
        first = self.assigned[0] if self.assigned else None
        self.device = f"{first['execution_provider']} ({first['device_type']})" if first else "none"
        self.fault = _fault(spec, self.active, first)
        self.requested = [] if is_selection(spec.compute_units) else [spec.compute_units]

    def record(self, model_sha256: str) -> dict[str, Any]:
        """The Windows ML placement record (schemas/windows-ml-placement.schema.json)."""
        ort = ort_module()
        spec = self.spec
        selection: dict[str, Any] = (
            {"mode": "policy", "policy": spec.compute_units.upper()}
            if is_selection(spec.compute_units)
            else {
                "mode": "explicit",
                "policy": None,
                "requested_providers": [spec.compute_units],
                **({"device_type": spec.device_type} if spec.device_type else {}),
            }
        )
        types = {a["execution_provider"]: a["device_type"] for a in reversed(self.assigned)}
        nodes = []
        for sub in self.session.get_provider_graph_assignment_info():
            for node in sub.get_nodes():
                nodes.append(
                    {
                        "name": node.name,
                        "op_type": node.op_type,
                        "execution_provider": sub.ep_name,
                        "device_type": types.get(sub.ep_name),
                    }
                )
        placed = [n for n in nodes if n["device_type"]]
        on_accel = [n for n in placed if n["device_type"] in ACCELERATOR_TYPES]
        share = len(on_accel) / len(placed) if placed and spec.role == "accelerator" else None
        return {
            "format": "windows-ml-placement/1",
            "policy_id": spec.policy_id,
            "model_sha256": model_sha256,
            "os_build": os_build(),
            "onnxruntime_version": ort.__version__,
            "captured_at": now_utc(),
            "selection": selection,
            "compilation": self.compilation,
            "assigned": self.assigned,
            "nodes": nodes,
            "active_providers": self.active,
            "ep_devices_offered": ep_devices(),
            "plugin_libraries": self.plugins,
            "summary": {
                "nodes": len(nodes),
                "nodes_with_device": len(placed),
                "nodes_on_npu_or_gpu": len(on_accel),
                "operation_share": share,
                "operation_share_rule": "nodes whose provider's assigned device is an "
                "NPU or GPU / nodes with an assigned device "
                "(accelerator policies only)",
            },
        }


def os_build() -> str:
    """The Windows build (10.0.26100...) on Windows, else the platform's own string."""
    return platform.version() if platform.system() == "Windows" else platform.platform()


def _assigned(session: Any, active: list[str]) -> list[dict[str, Any]]:
    """The session's providers and devices, highest priority first: the device the session
    binds its inputs to where ONNX Runtime says, else the provider's devices on offer."""
    offered = list(ort_module().get_ep_devices())
    bound: dict[str, Any] = {}
    try:
        for d in session.get_input_epdevices():
            if d is not None:
                bound.setdefault(d.ep_name, d)
    except Exception:  # an ORT without the call: the devices on offer stand in
        bound = {}
    out = []
    for ep in active:
        d = bound.get(ep) or next((x for x in offered if x.ep_name == ep), None)
        out.append(
            _device_json(d)
            if d is not None
            else {"execution_provider": ep, "device_type": "CPU" if ep.startswith("CPU") else "GPU"}
        )
    return out


def _fault(spec: PolicySpec, active: list[str], first: dict[str, Any] | None) -> str | None:
    if first is None:
        return "ONNX Runtime assigned no execution provider"
    where = f"{first['execution_provider']} on a {first['device_type']}"
    if not is_selection(spec.compute_units) and active[0] != spec.compute_units:
        return (
            f"requested {spec.compute_units}, but after compilation ONNX Runtime runs "
            f"{active} (a silent fallback)"
        )
    if spec.role == "accelerator" and first["device_type"] not in ACCELERATOR_TYPES:
        return (
            f"{spec.compute_units} assigned {where}: an accelerator policy on the CPU is a fallback"
        )
    if spec.role == "cpu-only" and first["device_type"] != "CPU":
        return f"{spec.compute_units} assigned {where}, but the policy is declared cpu-only"
    return None


def start(
    spec: PolicySpec,
    files: ModelFiles,
    root: Path,
    plugins: list[dict[str, Any]],
    under: str = COMPILED_DIR,
) -> WinmlPolicy:
    """Compile the ONNX export ahead of time for the policy (into UNDER, a folder of the run
    dir `root`) and open its session."""
    if files.onnx_file is None or files.tensor_form is None:
        raise CannotStart(
            "the workload offers no tensor form, so there is no ONNX export to compile"
        )
    ort = ort_module()
    if not hasattr(ort, "ModelCompiler"):
        raise CannotStart(
            f"this onnxruntime ({ort.__version__}) has no ModelCompiler: "
            "ahead-of-time compilation needs ONNX Runtime 1.22 or later"
        )
    dest = root / under / f"{spec.policy_id}.onnx"
    dest.parent.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    compilation: dict[str, Any] = {
        "aot": True,
        "succeeded": True,
        "error": None,
        "compiled_model_sha256": None,
    }
    try:
        compiler = ort.ModelCompiler(
            session_options(spec, files.threads),
            str(files.onnx_file),
            embed_compiled_data_into_model=True,
        )
        compiler.compile_to_file(str(dest))
        compilation["compiled_model_sha256"] = file_sha256(dest)
        compilation["compiled_model_file"] = f"{under}/{spec.policy_id}.onnx"
    except CannotStart:
        raise
    except Exception as exc:  # recorded: the auditor reads a failed compilation as a fault
        compilation.update(succeeded=False, error=f"{type(exc).__name__}: {exc}")
    compilation["seconds"] = time.perf_counter() - t
    model = dest if compilation["succeeded"] else files.onnx_file
    options = session_options(spec, files.threads)
    options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            session = ort.InferenceSession(str(model), options)
    except Exception as exc:
        raise CannotStart(
            f"ONNX Runtime could not create a {spec.compute_units} session on "
            f"the compiled model ({type(exc).__name__}: {exc})"
        ) from None
    policy = WinmlPolicy(spec, session, files, compilation, plugins)
    if not compilation["succeeded"] and policy.fault is None:
        policy.fault = f"ahead-of-time compilation failed: {compilation['error']}"
    return policy
