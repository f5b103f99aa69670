"""The protocol B run configuration: a TOML file validated against
`schemas/residency-config.schema.json`, or the embedded default
(`runner/defaults/residency.toml`).

Keys a user file leaves out take the values of `BASE` (the same as the embedded default,
policies excepted: a user file that names no policy gets the two CPU policies). Relative
paths are resolved against the file's folder. Every inconsistency the schema cannot express
(two policies with one id, a baseline that is not cpu-only, an accelerator policy that names
the CPU, a quantized ONNX Runtime policy) is refused here, before anything is measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import schemas
from runner.b.energy.window import Minimums
from runner.config import experiment_id_from, load, merge, read_toml, resolve_path
from runner.conformance import Break
from runner.errors import RunnerError

DEFAULT_CONFIG_NAME = "residency.toml"

CPU_POLICIES: list[dict[str, Any]] = [
    {"id": "torch-cpu", "runtime": "torch", "compute_units": "cpu", "role": "cpu-only"},
    {
        "id": "ort-cpu",
        "runtime": "onnxruntime",
        "compute_units": "CPUExecutionProvider",
        "role": "cpu-only",
    },
]

BASE: dict[str, Any] = {
    "seed": 20260924,
    "notes": "",
    "model_tier": "lite",
    "corpus": {"eval_size": 1000},
    "workload": {"callable": "runner.workloads.bow:BagOfWords", "options": {}, "context": 64},
    "trials": {"per_policy": 5, "warmup": 100},
    "energy": {
        "repetitions": 20,
        "sampling_interval_s": 0.05,
        "min_sample_periods": 10,
        "min_counter_updates": 5,
        "idle_seconds": 2.0,
        "instruments": ["nvml", "rapl"],
        "powercap_root": "/sys/class/powercap",
        "rapl_max_watts": 1000.0,
    },
    "placement": {"diagnostic_prompts": 20, "operation_share_floor": 0.5},
    "gates": {"accuracy_floor": 0.70, "agreement_floor": 0.99, "measure_rejected_energy": False},
}

_CUDA = re.compile(r"^cuda(:\d+)?$")
SELECTION_POLICIES = (
    "DEFAULT",
    "PREFER_CPU",
    "PREFER_NPU",
    "PREFER_GPU",
    "MAX_PERFORMANCE",
    "MAX_EFFICIENCY",
    "MIN_OVERALL_POWER",
)
"""ONNX Runtime's EP device selection policies (`OrtExecutionProviderDevicePolicy`)."""


@dataclass(frozen=True)
class PolicySpec:
    """One compute policy as declared: where one model artifact runs."""

    policy_id: str
    runtime: str
    """`torch` or `onnxruntime`."""
    compute_units: str
    """torch: cpu, cuda or cuda:N; onnxruntime: the execution provider asked for."""
    role: str
    """`accelerator` or `cpu-only`."""
    precision: str
    when: str
    """`always`, or `available`: left out (reason recorded) where the machine lacks it."""
    notes: str = ""
    device_type: str | None = None
    """windows-ml with an explicit provider: the device type it is bound to (NPU, GPU, CPU)."""
    package: str | None = None
    """coreml: the converted package it runs (`w8a8` by default, or `float16`)."""
    ac_only: bool = False
    """A rung the ladder runs on AC only (a discrete GPU, Core ML's `all`): left out, with the
    reason, when the machine is on battery (B9)."""
    retry_of: str | None = None
    gpu_operation_share_floor: float | None = None
    """B7: a GPU retry's own floor of operations on the GPU."""

    @property
    def on_cpu(self) -> bool:
        if self.runtime == "windows-ml" and self.compute_units.upper() in SELECTION_POLICIES:
            return self.role == "cpu-only"  # the selection is checked against the role
        return self.compute_units in ("cpu", "CPUExecutionProvider", "cpuOnly")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "policy_id": self.policy_id,
            "runtime": self.runtime,
            "compute_units": self.compute_units,
            "role": self.role,
            "precision": self.precision,
            "when": self.when,
            "notes": self.notes,
        }
        if self.device_type:
            out["device_type"] = self.device_type
        if self.runtime == "coreml":
            out["package"] = self.package or "w8a8"
        if self.retry_of:
            out["retry_of"] = self.retry_of
        if self.gpu_operation_share_floor is not None:
            out["gpu_operation_share_floor"] = self.gpu_operation_share_floor
        return out


@dataclass(frozen=True)
class Gates:
    """B8: the floors a policy must meet before its energy is measured."""

    accuracy_floor: float
    agreement_floor: float
    reference_outputs: Path | None
    measure_rejected_energy: bool


@dataclass(frozen=True)
class EnergyConfig:
    repetitions: int
    minimums: Minimums
    idle_seconds: float
    instruments: tuple[str, ...]
    powercap_root: Path
    hwinfo_log: Path | None = None
    """The sensor log the user's HWiNFO writes (instrument `hwinfo`)."""
    powermetrics_log: Path | None = None
    """A powermetrics capture the user started (instrument `powermetrics`); None: the runner
    starts powermetrics itself."""
    log_timeout_s: float = 10.0
    """How long to wait for an external log to reach past a window's end."""


@dataclass(frozen=True)
class ResidencyConfig:
    """The protocol B run asked for, every default applied; fixed before measuring."""

    source: str
    text: str
    """The config file as read (kept in the run dir)."""
    experiment_id: str
    seed: int
    notes: str
    model_tier: str
    corpus_path: Path | None
    eval_size: int | None
    max_texts: int | None
    workload_callable: str
    workload_options: dict[str, Any]
    context: int
    trials_per_policy: int
    warmup: int
    energy: EnergyConfig
    diagnostic_prompts: int
    operation_share_floor: float
    gates: Gates
    policies: tuple[PolicySpec, ...]
    baseline_policy: str
    base_dir: Path = Path(".")
    """The config file's folder: relative paths (a workload's `path_options` too) start there."""
    off_protocol: bool = False
    threads: dict[str, int] = field(default_factory=dict)
    """`[threads]`: the intra-op threads the config declares (`torch`, and `onnxruntime` for
    protocol B); empty: the workload's default (runner.model.run_threads)."""
    """`runner residency --off-protocol`: a diagnostic run, allowed to break the protocol."""
    idle_unload_s: float = 30.0
    """`[power_state] idle_unload_s`: how long the discrete GPU's power is logged after every
    session is closed (B9)."""
    battery_policy: str = "MAX_EFFICIENCY"
    """`[power_state] battery_policy`: the selection the battery ladder runs (B9)."""
    plugin_libraries: tuple[tuple[str, Path], ...] = ()
    """`[windows_ml] plugin_libraries`: (registration name, library path) of each plug-in
    execution provider, registered before any windows-ml policy is checked or started."""


#: Protocol B's fixed numbers a configuration can break (docs/protocol.md).
PROMPTS = schemas.convention("B", "prompts")
WARMUP = schemas.convention("B", "warmup")
TRIALS = schemas.convention("B", "trials_per_policy")
MIN_SAMPLES = schemas.convention("B", "min_samples_per_window")


def protocol_breaks(cfg: ResidencyConfig, prompts: int) -> list[Break]:
    """The settings of CFG that break protocol B (`runner.conformance`), PROMPTS being the
    length of the fixed sequence the corpus gives: B2 (a warm-up of 100 batch-one
    classifications, then the fixed sequence of 1,000 prompts), B3 (at least five trials a
    policy) and the B6 decision (at least 10 power samples inside each window)."""
    out = []
    if prompts != PROMPTS:
        out.append(
            Break("B2", "the same fixed sequence of 1,000 prompts", "corpus.eval_size", prompts)
        )
    if cfg.warmup < WARMUP:
        out.append(
            Break(
                "B2",
                "a warm-up of 100 batch-one classifications before each trial",
                "trials.warmup",
                cfg.warmup,
            )
        )
    if cfg.trials_per_policy < TRIALS:
        out.append(
            Break(
                "B3",
                "at least five trials per compute policy",
                "trials.per_policy",
                cfg.trials_per_policy,
            )
        )
    if cfg.energy.minimums.sample_periods < MIN_SAMPLES:
        out.append(
            Break(
                "B6",
                "at least 10 power samples inside each inference window",
                "energy.min_sample_periods",
                cfg.energy.minimums.sample_periods,
            )
        )
    return out


def load_residency_config(path: Path | None) -> ResidencyConfig:
    """Read, validate and complete a config; `None` means the embedded default."""
    return load(path, DEFAULT_CONFIG_NAME, _from_file)


def _from_file(path: Path, label: str) -> ResidencyConfig:
    raw = read_toml(path, "residency_config")
    base_dir = path.resolve().parent
    m = merge(BASE, raw)
    policies = tuple(_policy(p, path) for p in raw.get("policies", CPU_POLICIES))
    ids = [p.policy_id for p in policies]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise RunnerError(f"config file {path}: policy id(s) {repeated} appear more than once")
    cpu_only = [p for p in policies if p.role == "cpu-only"]
    baseline = raw.get("baseline_policy") or (cpu_only[0].policy_id if cpu_only else None)
    if baseline is None:
        raise RunnerError(
            f"config file {path}: no cpu-only policy: B7 compares every "
            "accelerator policy with a CPU-only baseline on the same machine"
        )
    chosen = next((p for p in policies if p.policy_id == baseline), None)
    if chosen is None or chosen.role != "cpu-only":
        raise RunnerError(
            f"config file {path}: baseline_policy {baseline!r} must name a "
            "cpu-only policy of the run"
        )
    if chosen.when != "always":
        raise RunnerError(
            f"config file {path}: the baseline policy {baseline!r} cannot be "
            'optional (when = "available")'
        )
    e, g, c = m["energy"], m["gates"], raw.get("corpus", {})
    return ResidencyConfig(
        source=label,
        text=path.read_text(encoding="utf-8"),
        experiment_id=raw.get("experiment_id") or experiment_id_from(path),
        seed=m["seed"],
        notes=m["notes"],
        model_tier=m["model_tier"],
        corpus_path=resolve_path(base_dir, c["path"]) if "path" in c else None,
        eval_size=m["corpus"].get("eval_size"),
        max_texts=c.get("max_texts"),
        workload_callable=m["workload"]["callable"],
        workload_options=dict(m["workload"].get("options", {})),
        threads=dict(raw.get("threads", {})),
        context=m["workload"]["context"],
        trials_per_policy=m["trials"]["per_policy"],
        warmup=m["trials"]["warmup"],
        energy=EnergyConfig(
            repetitions=e["repetitions"],
            minimums=Minimums(
                float(e["sampling_interval_s"]),
                e["min_sample_periods"],
                e["min_counter_updates"],
                float(e["rapl_max_watts"]),
            ),
            idle_seconds=float(e["idle_seconds"]),
            instruments=tuple(e["instruments"]),
            powercap_root=resolve_path(base_dir, e["powercap_root"]),
            hwinfo_log=resolve_path(base_dir, e["hwinfo_log"]) if "hwinfo_log" in e else None,
            powermetrics_log=(
                resolve_path(base_dir, e["powermetrics_log"]) if "powermetrics_log" in e else None
            ),
            log_timeout_s=float(e.get("log_timeout_s", 10.0)),
        ),
        diagnostic_prompts=m["placement"]["diagnostic_prompts"],
        operation_share_floor=float(m["placement"]["operation_share_floor"]),
        gates=Gates(
            float(g["accuracy_floor"]),
            float(g["agreement_floor"]),
            resolve_path(base_dir, g["reference_outputs"]) if "reference_outputs" in g else None,
            bool(g["measure_rejected_energy"]),
        ),
        policies=policies,
        baseline_policy=baseline,
        base_dir=base_dir,
        idle_unload_s=float(raw.get("power_state", {}).get("idle_unload_s", 30.0)),
        battery_policy=raw.get("power_state", {}).get("battery_policy", "MAX_EFFICIENCY"),
        plugin_libraries=tuple(
            (name, resolve_path(base_dir, lib))
            for name, lib in raw.get("windows_ml", {}).get("plugin_libraries", {}).items()
        ),
    )


def _policy(raw: dict[str, Any], path: Path) -> PolicySpec:
    spec = PolicySpec(
        policy_id=raw["id"],
        runtime=raw["runtime"],
        compute_units=raw["compute_units"],
        role=raw["role"],
        precision=raw.get("precision", "float32"),
        when=raw.get("when", "always"),
        notes=raw.get("notes", ""),
        device_type=raw.get("device_type"),
        package=raw.get("package"),
        ac_only=bool(raw.get("ac_only", False)),
        retry_of=raw.get("retry_of"),
        gpu_operation_share_floor=raw.get("gpu_operation_share_floor"),
    )
    where = f"config file {path}: policy {spec.policy_id!r}"
    if spec.runtime == "torch" and not (
        spec.compute_units == "cpu" or _CUDA.match(spec.compute_units)
    ):
        raise RunnerError(
            f"{where}: torch compute_units must be cpu, cuda or cuda:N, not {spec.compute_units!r}"
        )
    if spec.runtime == "windows-ml" and not (
        spec.compute_units.upper() in SELECTION_POLICIES
        or spec.compute_units.endswith("ExecutionProvider")
    ):
        raise RunnerError(
            f"{where}: windows-ml compute_units must be an EP selection policy "
            f"({', '.join(SELECTION_POLICIES)}) or an execution provider, not "
            f"{spec.compute_units!r}"
        )
    if spec.runtime == "coreml" and spec.compute_units not in (
        "cpuAndNeuralEngine",
        "cpuOnly",
        "cpuAndGPU",
        "all",
    ):
        raise RunnerError(
            f"{where}: coreml compute_units must be cpuAndNeuralEngine, cpuOnly, "
            f"cpuAndGPU or all, not {spec.compute_units!r}"
        )
    if spec.device_type is not None and (
        spec.runtime != "windows-ml" or spec.compute_units.upper() in SELECTION_POLICIES
    ):
        raise RunnerError(
            f"{where}: device_type binds an explicit windows-ml execution "
            "provider to one device type; a selection policy picks its own"
        )
    if spec.runtime in ("onnxruntime", "windows-ml", "coreml"):
        if spec.runtime == "onnxruntime" and not spec.compute_units.endswith("ExecutionProvider"):
            raise RunnerError(
                f"{where}: onnxruntime compute_units must name an execution "
                f"provider (e.g. CUDAExecutionProvider), not "
                f"{spec.compute_units!r}"
            )
        if spec.precision != "float32" and spec.runtime != "coreml":
            raise RunnerError(
                f"{where}: onnxruntime policies run the float32 ONNX export; "
                f"precision {spec.precision!r} is for torch policies"
            )
    if spec.role == "accelerator" and spec.on_cpu:
        raise RunnerError(
            f"{where}: an accelerator policy cannot name the CPU "
            f"({spec.compute_units}); declare it cpu-only"
        )
    if spec.role == "cpu-only" and not spec.on_cpu:
        raise RunnerError(
            f"{where}: a cpu-only policy must run on the CPU (cpu or "
            f"CPUExecutionProvider), not {spec.compute_units}"
        )
    return spec
