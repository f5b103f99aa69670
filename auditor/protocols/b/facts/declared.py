"""What a protocol B run declares before measuring, read from its manifest once: the compute
policies (role, runtime, compute units, floors, the accelerator each counts as its own), the
model tier, the energy repetitions and minimums, and when each part was declared. A
declaration is what the evidence is judged against, never evidence itself; what the manifest
records of a policy's session (its active providers, a fault) is the run's own admission,
read as such (`Policy.recorded_fallback`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import schemas
from auditor.protocols.cache import per_view
from auditor.readers import timestamps
from auditor.readers.placement._frame import ACCELERATORS, device_of

if TYPE_CHECKING:
    from auditor.protocols.b.view import RunView

GAP_FACTOR = 1.5
"""Readings more than this many declared sampling periods apart leave a gap (when the
manifest declares no `gap_factor`): jitter passes, a missed reading does not."""
PROTOCOL_WARMUP = schemas.convention("B", "warmup")
PROTOCOL_PROMPTS = schemas.convention("B", "prompts")
MIN_TRIALS = schemas.convention("B", "trials_per_policy")


@dataclass(frozen=True)
class Policy:
    """One compute policy as the manifest declares it."""

    policy_id: str
    role: str
    runtime: str
    compute_units: str
    status: str | None
    reason: str | None
    precision: str | None
    is_baseline: bool
    accelerator: frozenset[str]
    """Devices that count as this policy's accelerator (empty for a cpu-only policy)."""
    provider: str | None
    """The execution provider asked for, for an ONNX Runtime or Windows ML policy that
    names one: its nodes count exactly."""
    floor: float | None
    """The operation-share floor it must meet (its own, else the run's)."""
    gpu_floor: float | None
    """A GPU retry's own floor of GPU operations (B7)."""
    is_gpu_retry: bool
    placement_file: str | None
    artifact_file: str | None
    artifact_sha256: str | None
    recorded_fallback: str | None = None
    """A fallback to the CPU the manifest itself records for this accelerator policy (its
    first active provider is not the one asked for, its device is the CPU, its status a
    policy fault), in words; None when it records none."""

    @property
    def label(self) -> str:
        return f"{self.policy_id} ({self.runtime} {self.compute_units})"

    @property
    def computes_on(self) -> frozenset[str]:
        """The devices whose power its windows must hold: the CPU for a cpu-only policy,
        the CPU and its accelerator otherwise (the host runs the session either way)."""
        return frozenset({"cpu"}) | (self.accelerator & {"gpu", "ane", "npu"})


WINDOWS_ML_RUNTIMES = frozenset({"windows-ml", "windowsml", "winml"})
"""How a manifest names the Windows ML runtime (`policies[].runtime`, lower case)."""

_COREML_UNITS = {
    "cpuandneuralengine": {"ane"},
    "cpu-and-ne": {"ane"},
    "cpuandgpu": {"gpu"},
    "cpu-and-gpu": {"gpu"},
    "all": {"ane", "gpu"},
}
_WINDOWS_POLICIES = {
    "default",
    "prefer_npu",
    "prefer_gpu",
    "max_performance",
    "max_efficiency",
    "min_overall_power",
}


def accelerator_of(
    role: str, runtime: str, compute_units: str
) -> tuple[frozenset[str], str | None]:
    """(the devices a policy's operations count as on its accelerator, the execution
    provider it names, if any)."""
    if role != "accelerator":
        return frozenset(), None
    units = compute_units.strip()
    key = units.lower()
    if runtime.lower() == "coreml" or (key in _COREML_UNITS and key != "all"):
        # Core ML's own names say which devices, whatever runtime is declared
        return frozenset(_COREML_UNITS.get(key, ACCELERATORS)), None
    if key.endswith("executionprovider"):
        device = device_of(units)
        return (frozenset({device}) if device in ACCELERATORS else ACCELERATORS), units
    if key.removeprefix("ortexecutionproviderdevicepolicy_") in _WINDOWS_POLICIES:
        return frozenset({"npu", "gpu"}), None
    device = device_of(units)
    return (frozenset({device}) if device in ACCELERATORS else ACCELERATORS), None


def _recorded_fallback(p: dict[str, Any], role: str, provider: str | None) -> str | None:
    """What the manifest records of an accelerator policy's session that says it ran on the
    CPU, or None."""
    if role != "accelerator":
        return None
    if p.get("status") == "fault":
        return f"the manifest records a policy fault ({p.get('reason') or 'no reason given'})"
    active = p.get("active_providers")
    requested = p.get("requested_providers")
    asked = (
        requested[0]
        if isinstance(requested, list) and requested and isinstance(requested[0], str)
        else provider
    )
    if (
        isinstance(active, list)
        and active
        and isinstance(active[0], str)
        and asked
        and active[0] != asked
    ):
        return f"the manifest records {active[0]} as its active provider, not the {asked} asked for"
    device = p.get("device")
    if isinstance(device, str) and device_of(device) == "cpu":
        return f"the manifest records its device as {device!r}"
    return None


def package_sha256(files: Mapping[str, str], folder: str) -> str | None:
    """The revision of a folder of the run (a Core ML `.mlpackage`): SHA-256 over each of
    its files' `<path inside it>\0<SHA-256 hex>\n`, sorted by path (the runner's
    `runner.b.coreml_convert.package_sha256`); None when no file lies under it."""
    prefix = folder.rstrip("/") + "/"
    inside = sorted(
        (rel[len(prefix) :], sha) for rel, sha in files.items() if rel.startswith(prefix)
    )
    if not inside:
        return None
    h = hashlib.sha256()
    for rel, sha in inside:
        h.update(f"{rel}\0{sha}\n".encode())
    return h.hexdigest()


def number(v: Any) -> float | None:
    """V as a float when it is a JSON number (not a boolean), else None."""
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


@per_view
def policies(view: RunView) -> dict[str, Policy]:
    """The declared policies, in manifest order."""
    m = view.m
    run_floor = number((m.get("placement") or {}).get("operation_share_floor"))
    baseline = m.get("baseline_policy")
    out: dict[str, Policy] = {}
    for p in m.get("policies") or []:
        if not isinstance(p, dict) or not isinstance(p.get("policy_id"), str):
            continue
        role, runtime = str(p.get("role")), str(p.get("runtime"))
        units = str(p.get("compute_units"))
        accel, provider = accelerator_of(role, runtime, units)
        retry = role == "accelerator" and (
            isinstance(p.get("retry_of"), str)
            or (runtime.lower() == "coreml" and units.lower() == "all")
        )
        own = number(p.get("operation_share_floor"))
        out[p["policy_id"]] = Policy(
            policy_id=p["policy_id"],
            role=role,
            runtime=runtime,
            compute_units=units,
            status=p.get("status"),
            reason=p.get("reason"),
            precision=p.get("precision"),
            is_baseline=p["policy_id"] == baseline,
            accelerator=accel,
            provider=provider,
            floor=(own if own is not None else run_floor) if role == "accelerator" else None,
            gpu_floor=number(p.get("gpu_operation_share_floor")),
            is_gpu_retry=retry,
            placement_file=p.get("placement_file"),
            artifact_file=p.get("artifact_file"),
            artifact_sha256=p.get("artifact_sha256"),
            recorded_fallback=_recorded_fallback(p, role, provider),
        )
    return out


@dataclass(frozen=True)
class Declared:
    """One part of the declaration and when the manifest says it was fixed."""

    what: str
    pointer: str
    """Where the time is written in manifest.json."""
    at: float | None
    """Epoch seconds; None when the time written there is not a date-time."""
    text: Any


SECTIONS = (
    ("the compute policies' floors and gates", "/gates"),
    ("the placement floor", "/placement"),
    ("the energy window and its minimums", "/energy"),
)
"""The manifest sections that may carry a `declared_at` of their own (B1), beside the
manifest's."""


@per_view
def declarations(view: RunView) -> list[Declared]:
    """When each part of the declaration was fixed: the manifest's `declared_at`, and the
    `declared_at` a section (`gates`, `placement`, `energy`) or a policy
    (`policies[i].declared_at`) records when it was fixed later than the rest."""
    m = view.m
    out = (
        [
            Declared(
                "the declaration",
                "/declared_at",
                timestamps.epoch_s(m.get("declared_at")),
                m.get("declared_at"),
            )
        ]
        if "declared_at" in m
        else []
    )
    for what, pointer in SECTIONS:
        sec = m.get(pointer[1:])
        if isinstance(sec, dict) and "declared_at" in sec:
            out.append(
                Declared(
                    what,
                    f"{pointer}/declared_at",
                    timestamps.epoch_s(sec["declared_at"]),
                    sec["declared_at"],
                )
            )
    for i, p in enumerate(m.get("policies") or []):
        if isinstance(p, dict) and "declared_at" in p:
            out.append(
                Declared(
                    f"policy {p.get('policy_id')!r}",
                    f"/policies/{i}/declared_at",
                    timestamps.epoch_s(p["declared_at"]),
                    p["declared_at"],
                )
            )
    return out


def model_tier(view: RunView) -> str | None:
    return view.m.get("model_tier")


def repetitions(view: RunView) -> int:
    r = (view.m.get("energy") or {}).get("repetitions")
    return r if isinstance(r, int) and r > 0 else 1


def minimums(view: RunView) -> dict[str, float]:
    mins = (view.m.get("energy") or {}).get("minimums") or {}
    out = {
        k: float(v)
        for k, v in mins.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }
    out.setdefault("gap_factor", GAP_FACTOR)
    return out
