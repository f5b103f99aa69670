"""The power-state checks of a run with Windows ML policies (B9, seed B's Windows ladder):
`battery_skips_discrete_gpu` and `idle_unloads_discrete_gpu`, each judged by the runner from
raw evidence it keeps under `power_state/` (docs/run-dir-residency.md), never declared.

- Where the run's own evidence shows no discrete GPU (environment.json lists none and no
  power trace of the run reads a GPU power column), both are `not_applicable`, saying so.
- On battery, the battery ladder's selection policy (MAX_EFFICIENCY by default) is compiled
  and opened once more and its Windows ML record kept as `power_state/battery.winml.json`:
  `passed` when the session it chose holds no GPU, `failed` when it holds one. A run that
  never saw the machine on battery cannot show the check: it is left unrecorded, with the
  reason in the manifest's notes (the auditor reads it as missing evidence).
- After the last trial every session is closed; the power trace of the next
  `idle_unload_s` seconds is kept as `power_state/idle-after-unload.<ext>`: `passed` when its
  last reading of the discrete GPU is at or below `released_below_w`, else `failed`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner import artifacts
from runner.b import power_source, winml
from runner.b.config import ResidencyConfig
from runner.b.energy.base import now_utc, parse_time
from runner.b.state import Declaration, Inputs, PolicyState
from runner.b.trials import Instruments
from runner.rundir import Progress

RELEASED_BELOW_W = 1.0
"""A discrete GPU at or below this many watts is released (D3cold reads about 0 W)."""
BATTERY = "battery_skips_discrete_gpu"
IDLE = "idle_unloads_discrete_gpu"


@dataclass
class PowerStateEvidence:
    """What the run gathered for B9 (set by the stages that gather it)."""

    discrete_gpu: str | None = None
    """Why the run's evidence shows a discrete GPU, or None."""
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    unshown: list[str] = field(default_factory=list)
    """Why a check could not be shown on this run."""

    def section(self, has_windows_ml: bool) -> dict[str, Any]:
        """The manifest's `power_state_checks` (absent without a Windows ML policy)."""
        if not has_windows_ml:
            return {}
        if self.discrete_gpu is None:
            why = (
                "no discrete GPU: environment.json lists no GPU and no power trace of "
                "the run reads a GPU power domain"
            )
            return {
                "power_state_checks": {
                    BATTERY: {"result": "not_applicable", "detail": why},
                    IDLE: {"result": "not_applicable", "detail": why},
                }
            }
        return {"power_state_checks": dict(self.checks)} if self.checks else {}


def battery_check(record: dict[str, Any], rel: str, gpu_names: list[str]) -> dict[str, Any]:
    """The battery check from the Windows ML record of the session chosen on battery."""
    gpus = [a for a in record.get("assigned", []) if a.get("device_type") == "GPU"]
    named = [
        a
        for a in gpus
        if not gpu_names
        or any(n.lower() in str(a.get("device_name", "")).lower() for n in gpu_names)
    ] or gpus
    chosen = ", ".join(
        f"{a['execution_provider']}/{a['device_type']}" for a in record.get("assigned", [])
    )
    if named:
        return {
            "result": "failed",
            "evidence": rel,
            "detail": f"on battery {record['selection'].get('policy')} chose {chosen}: "
            "the session holds a GPU",
        }
    return {
        "result": "passed",
        "evidence": rel,
        "detail": f"on battery {record['selection'].get('policy')} chose {chosen}: no "
        "GPU in the session",
    }


def idle_check(last_gpu_w: float | None, rel: str, seconds: float) -> dict[str, Any]:
    """The idle check from the last discrete-GPU reading of the trace after unloading."""
    if last_gpu_w is None:
        return {
            "result": "failed",
            "evidence": rel,
            "detail": f"the {seconds:g} s trace after the sessions were closed has no "
            "reading of the discrete GPU",
        }
    released = last_gpu_w <= RELEASED_BELOW_W
    return {
        "result": "passed" if released else "failed",
        "evidence": rel,
        "released_below_w": RELEASED_BELOW_W,
        "detail": f"{seconds:g} s after the last session was closed the discrete GPU read "
        f"{last_gpu_w:g} W ({'at or below' if released else 'above'} "
        f"{RELEASED_BELOW_W:g} W)",
    }


def gather(
    cfg: ResidencyConfig,
    root: Path,
    inputs: Inputs,
    decl: Declaration,
    states: dict[str, PolicyState],
    inst: Instruments,
    say: Progress,
) -> PowerStateEvidence:
    """After the trials, with every session closed: the B9 evidence (module docstring)."""
    ev = PowerStateEvidence()
    if not any(s.spec.runtime == winml.RUNTIME for s in states.values()):
        return ev
    external = inst.external
    if external is not None and external.has_gpu:
        ev.discrete_gpu = f"the {external.source} log reads the discrete GPU's power"
    if ev.discrete_gpu is None:
        return ev
    if external is not None:
        rel = f"power_state/idle-after-unload{external.extension}"
        start = now_utc()
        time.sleep(cfg.idle_unload_s)
        end = now_utc()
        external.capture(parse_time(start), parse_time(end), root / rel)
        ev.checks[IDLE] = idle_check(external.last_gpu_watts(root / rel), rel, cfg.idle_unload_s)
        say(f"power state: {ev.checks[IDLE]['detail']}")
    else:
        ev.unshown.append(
            "idle_unloads_discrete_gpu not shown: no power log reads the discrete GPU"
        )
    source = power_source.read()[0]
    battery = next(
        (
            s
            for s in states.values()
            if s.spec.runtime == winml.RUNTIME
            and s.spec.compute_units.upper() == cfg.battery_policy
        ),
        None,
    )
    if source.value != "battery" or battery is None or decl.onnx is None:
        ev.unshown.append(
            "battery_skips_discrete_gpu not shown: "
            + (
                f"the machine was on {source.value or 'an unknown power source'} after the "
                "trials (unplug it for the battery ladder)"
                if source.value != "battery"
                else f"no windows-ml policy runs the battery selection {cfg.battery_policy}"
            )
        )
        return ev
    policy = winml.start(
        battery.spec, decl.files, root, inputs.plugins, under="power_state/compiled"
    )
    try:
        record = policy.record(decl.onnx.sha256)
    finally:
        policy.close()
    rel = "power_state/battery.winml.json"
    artifacts.write_json(root / rel, record)
    ev.checks[BATTERY] = battery_check(record, rel, [])
    say(f"power state: {ev.checks[BATTERY]['detail']}")
    return ev
