"""The power-state checks of a protocol B run (B9) and what their evidence shows: each check
the manifest records (`power_state_checks.<check>`: `result`, `detail`, the `evidence` it
cites), judged from the trace or record it cites (power_state/*, or a placement file or
power trace of the run) on that file's own word, and whether the run's own evidence shows a
discrete GPU.

- **Whose file**: a cited file that names another machine, another model or lies outside the
  session (`facts/belonging.py`: B0105, B0106, B0107) is no evidence of this run's check.
- **A discrete GPU in the run's evidence**: environment.json lists one (`gpus`), or a power
  trace of the run reads a `gpu` domain (HWiNFO's `GPU Power`, nvidia-smi, NVML: the
  discrete board; an integrated GPU is another domain).
- **On battery, the discrete GPU is skipped**: a record of a session the runtime chose by
  policy (`selection.mode` `policy`, e.g. MAX_EFFICIENCY: an explicit session was told its
  providers and shows nothing of a rung skipped) that holds no discrete GPU (a GPU device
  named like one of environment.json's `gpus`, or any GPU device when none is named); or a
  trace taken on battery, which means its own battery sensor discharges (every `battery`
  reading below 0 W: a reading above 0 W is the battery charging, the machine on AC), that
  reads the discrete GPU at or below the release level throughout.
- **An idle session releases it**: a trace that begins after the last trial ended (the idle
  session after the trials) whose last reading of the discrete GPU is at or below the
  release level.
- **The release level** is the protocol's (`schemas/conventions.json`,
  `released_below_w`: 1 W), never a figure the run declares.
A record cannot show a power level, and a trace without a `gpu` reading shows nothing of the
discrete GPU: either is no evidence for the check it does not speak to."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import polars as pl

import schemas
from auditor.protocols.b.facts.belonging import describe, foreign, trace_span
from auditor.protocols.b.facts.trials import run_span
from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.b.view import Evidence, RunView

RELEASED_BELOW_W: float = schemas.convention("B", "released_below_w")
"""A discrete GPU read at or below this many watts is released (the protocol's figure, in
schemas/conventions.json; D3cold reads about 0 W, an awake idle laptop GPU
several watts)."""
BATTERY = "battery_skips_discrete_gpu"
IDLE = "idle_unloads_discrete_gpu"
CHECKS = {
    BATTERY: "on battery the discrete-GPU rung is skipped",
    IDLE: "an idle session unloads without keeping the discrete GPU awake",
}
RESULTS = ("passed", "failed", "not_applicable")


@dataclass(frozen=True)
class CheckEvidence:
    """One power-state check as recorded, and what its cited evidence shows."""

    key: str
    result: Any
    detail: str | None
    cited: tuple[str, ...]
    """The files its `evidence` names."""
    unreadable: tuple[str, ...]
    """Of them, those the run does not hold or no reader could read."""
    rejected: tuple[str, ...] = ()
    """Why cited files that were read are no evidence of this check, in words."""
    shows: str | None = None
    """What the evidence shows for the check, in words (None: nothing)."""
    contradicts: str | None = None
    """What the evidence shows against a `passed` result, in words."""


def _gpu_names(view: RunView) -> frozenset[str]:
    gpus = (view.environment or {}).get("gpus")
    return frozenset(
        str(g.get("name")).lower() for g in gpus or [] if isinstance(g, Mapping) and g.get("name")
    )


@per_view
def discrete_gpu(view: RunView) -> str | None:
    """Why the run's own evidence shows a discrete GPU (module docstring), or None."""
    names = _gpu_names(view)
    if names:
        return f"environment.json lists {', '.join(sorted(names))}"
    for ev in view.power.values():
        if ev.frame is not None and not ev.frame.filter(pl.col("domain") == "gpu").is_empty():
            return f"{ev.path} reads a GPU power domain"
    return None


def _evidence(view: RunView) -> dict[str, Evidence]:
    out: dict[str, Evidence] = {ev.path: ev for ev in view.power.values()}
    out.update({ev.path: ev for evs in view.placement.values() for ev in evs})
    out.update(view.power_state)
    return out


def _gpu_readings(ev: Evidence) -> pl.DataFrame | None:
    """The trace's readings of the GPU domain (`end`, `watts`), in time order; None when
    the file is no trace or reads no GPU."""
    if ev.family != "power" or ev.frame is None:
        return None
    g = ev.frame.filter((pl.col("domain") == "gpu") & pl.col("watts").is_not_null())
    return g.sort("end").select("end", "watts") if g.height else None


def _record_gpus(ev: Evidence, names: frozenset[str]) -> list[str] | None:
    """The discrete GPUs a placement record's session holds (None: the file is no record)."""
    if ev.family != "placement":
        return None
    assigned = [a for a in ev.meta.get("assigned") or [] if isinstance(a, Mapping)]
    if assigned:
        gpus = [a for a in assigned if str(a.get("device_type")).upper() == "GPU"]
        return [
            f"{a.get('execution_provider')} on {a.get('device_name') or 'a GPU'}"
            for a in gpus
            if not names
            or str(a.get("device_name") or "").lower() in names
            or not a.get("device_name")
        ]
    if ev.frame is None:
        return []
    on = ev.frame.filter(pl.col("device") == "gpu")
    return sorted({str(x) for x in on["provider"].to_list()}) if on.height else []


def _battery(ev: Evidence) -> tuple[bool | None, str]:
    """Whether a trace's own battery sensor shows the machine on battery (None: it does not
    say), and what it reads, in words."""
    if ev.frame is None:
        return None, f"{ev.path} has no battery sensor"
    b = ev.frame.filter((pl.col("domain") == "battery") & pl.col("watts").is_not_null())
    if b.is_empty():
        return None, f"{ev.path} has no battery sensor: it cannot show the machine on battery"
    charging = b.filter(pl.col("watts") > 0)
    if charging.height:
        r = charging.row(0, named=True)
        return False, (
            f"{ev.path}: its battery sensor ({r['source']}) reads +{r['watts']:.3g} "
            f"W at line {r['line']}: the battery charges, the machine was on AC"
        )
    if b.filter(pl.col("watts") >= 0).height:
        return None, (
            f"{ev.path}: its battery sensor does not discharge throughout: it does "
            "not show the machine on battery"
        )
    return True, f"{ev.path}: its battery sensor discharges throughout"


def _judge(
    key: str, evs: list[Evidence], limit: float, names: frozenset[str], last_end: float | None
) -> tuple[str | None, str | None, list[str]]:
    """(what the evidence shows for check KEY, what it shows against it, why cited files
    show nothing)."""
    shows: list[str] = []
    nothing: list[str] = []
    for ev in evs:
        gpu = _gpu_readings(ev)
        if key == BATTERY:
            held = _record_gpus(ev, names)
            if held is not None:
                selection = ev.meta.get("selection")
                mode = selection.get("mode") if isinstance(selection, Mapping) else None
                if mode != "policy":
                    nothing.append(
                        f"{ev.path} records a session told its providers "
                        f"(selection mode {mode!r}), not one the runtime chose by "
                        "policy: it shows nothing of the discrete-GPU rung skipped"
                    )
                    continue
                if held:
                    return None, f"{ev.path}: the session holds {', '.join(held)}", nothing
                shows.append(f"{ev.path}: the session holds no discrete GPU")
                continue
            if gpu is None:
                continue
            on_battery, said = _battery(ev)
            if on_battery is False:
                return None, said, nothing
            if on_battery is None:
                nothing.append(said)
                continue
            top = cast(float, gpu["watts"].max())  # a Float64 column of a non-empty frame
            if top > limit:
                return None, f"{ev.path}: the discrete GPU draws up to {top:.3g} W", nothing
            shows.append(f"{said}, and the discrete GPU stays at or below {limit:g} W")
        elif gpu is not None:
            span = trace_span(ev)
            if last_end is not None and span is not None and span[0] < last_end:
                nothing.append(
                    f"{ev.path} begins {last_end - span[0]:.3g} s before the last "
                    "trial ended: it is not the idle session after the trials"
                )
                continue
            last = gpu["watts"][-1]
            if last > limit:
                return (
                    None,
                    (
                        f"{ev.path}: the discrete GPU still draws {last:.3g} W at the "
                        f"trace's last reading (released: at most {limit:g} W)"
                    ),
                    nothing,
                )
            shows.append(
                f"{ev.path}: the discrete GPU reads {last:.3g} W at the end "
                f"(released at or below {limit:g} W)"
            )
    return ("; ".join(shows) or None), None, nothing


@per_view
def power_state_checks(view: RunView) -> dict[str, CheckEvidence]:
    """Each of the two checks (`CHECKS`), as recorded and judged by its evidence."""
    recorded = view.m.get("power_state_checks")
    recorded = recorded if isinstance(recorded, dict) else {}
    files = _evidence(view)
    names = _gpu_names(view)
    others = foreign(view)
    last_end = run_span(view)[1]
    out: dict[str, CheckEvidence] = {}
    for key in CHECKS:
        entry = got if isinstance(got := recorded.get(key), dict) else {}
        cited_raw = entry.get("evidence")
        cited = tuple(
            c
            for c in (
                [cited_raw]
                if isinstance(cited_raw, str)
                else cited_raw
                if isinstance(cited_raw, list)
                else []
            )
            if isinstance(c, str)
        )
        readable = [files[c] for c in cited if c in files and files[c].usable]
        unreadable = tuple(c for c in cited if c not in files or not files[c].usable)
        rejected = [
            f"{ev.path}: {describe(others[ev.path][0])}" for ev in readable if ev.path in others
        ]
        found = [ev for ev in readable if ev.path not in others]
        # the release level is the protocol's: a `released_below_w` the run declares is
        # never read
        shows, against, nothing = _judge(key, found, RELEASED_BELOW_W, names, last_end)
        detail = entry.get("detail")
        out[key] = CheckEvidence(
            key,
            entry.get("result"),
            detail if isinstance(detail, str) else None,
            cited,
            unreadable,
            tuple(rejected + nothing),
            shows,
            against,
        )
    return out
