"""Energy over one region of a power trace, from the raw records alone (read back from the
file the runner wrote), or the reason there is no figure.

A region is bounded by its markers (`window_start`/`window_end` for a trial,
`idle_start`/`idle_end` for an idle measurement). Every counter read inside it is one series
per (source, domain, device, field):
- consecutive readings give the energy; RAPL's decrease is a wrap (add `max_range`), NVML's
  is a driver reload (a reset: no figure);
- a gap between two RAPL reads longer than `max_range / max_watts` could hide a second wrap:
  no figure; any gap longer than `gap_factor` sampling periods is reported;
- fewer than two reads inside the region is a missing counter: no figure.
The region's energy sums the NVML GPU counters and the RAPL package counters (`psys` only
where there is no package zone). Then resolution (the short-window problem): a region shorter
than the declared number of sampling periods, a counter read fewer than `MIN_READINGS` times
inside it (the protocol's floor of 10 samples per window, which the auditor applies too), or
a counter that updated fewer times than declared inside it, gives `below_resolution`, never a
number. Power samples are counted and
averaged as a cross-check; energy never comes from them.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import schemas
from runner.b.energy.base import Record, parse_time

UNIT_J = {"mJ": 1e-3, "uJ": 1e-6}
MIN_READINGS = schemas.convention("B", "min_samples_per_window")
"""The protocol's floor (docs/protocol.md, B6): any power source gives at least this many
samples inside each inference window, or the window has no energy figure."""


@dataclass(frozen=True)
class Minimums:
    """The declared resolution floor of an energy window (config `[energy]`)."""

    sampling_interval_s: float
    sample_periods: int
    counter_updates: int
    max_watts: float = 1000.0
    """Ceiling of a RAPL zone's power, for the longest poll gap that cannot hide a wrap."""
    gap_factor: float = 3.0
    min_readings: int = MIN_READINGS
    """The protocol's floor of readings per window (`MIN_READINGS`): never read from a
    configuration; only a unit test of the arithmetic on a handful of reads lowers it."""

    @property
    def window_seconds(self) -> float:
        return self.sampling_interval_s * self.sample_periods

    def to_json(self) -> dict[str, Any]:
        return {
            "sampling_interval_s": self.sampling_interval_s,
            "sample_periods": self.sample_periods,
            "window_seconds": self.window_seconds,
            "counter_updates": self.counter_updates,
            "rapl_max_watts": self.max_watts,
            "gap_factor": self.gap_factor,
        }


@dataclass
class Series:
    source: str
    domain: str
    device: int
    field: str
    kind: str
    """`counter` or `sample`."""
    readings: int = 0
    updates: int = 0
    wraps: int = 0
    energy_j: float | None = None
    mean_watts: float | None = None
    max_gap_s: float | None = None
    problems: list[str] = dataclasses.field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.source} {self.domain} {self.device} ({self.field})"

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "domain": self.domain,
            "device": self.device,
            "field": self.field,
            "kind": self.kind,
            "readings_in_window": self.readings,
            "updates_in_window": self.updates if self.kind == "counter" else None,
            "wraps": self.wraps if self.kind == "counter" else None,
            "energy_j": self.energy_j,
            "mean_watts": self.mean_watts,
            "max_gap_s": self.max_gap_s,
            "problems": self.problems,
        }


@dataclass
class Analysis:
    status: str
    """`measured`, `below_resolution` or `not_measured`."""
    reason: str | None
    started_at: str | None
    ended_at: str | None
    window_seconds: float | None
    energy_j: float | None = None
    average_power_w: float | None = None
    energy_source: str | None = None
    series: list[Series] = dataclasses.field(default_factory=list)
    gaps: list[str] = dataclasses.field(default_factory=list)

    def conclude(self, energy: float, short: list[str]) -> Analysis:
        """The window's verdict once its series are read (every energy source's): when
        SHORT says why the window is below the protocol's resolution, `below_resolution`
        with those reasons; else `measured`, with ENERGY and its average power."""
        if short:
            self.status, self.reason = "below_resolution", "; ".join(short)
            return self
        self.status, self.energy_j = "measured", energy
        seconds = self.window_seconds
        self.average_power_w = energy / seconds if seconds is not None and seconds > 0 else None
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "window_seconds": self.window_seconds,
            "energy_j": self.energy_j,
            "average_power_w": self.average_power_w,
            "energy_source": self.energy_source,
            "series": [s.to_json() for s in self.series],
            "sampling_gaps": self.gaps,
        }


def analyse(
    records: list[Record],
    minimums: Minimums,
    start_event: str = "window_start",
    end_event: str = "window_end",
) -> Analysis:
    """The energy of the region between the two markers, or why there is none."""
    start = next((r for r in records if r["kind"] == "marker" and r["event"] == start_event), None)
    end = next((r for r in records if r["kind"] == "marker" and r["event"] == end_event), None)
    missing = [f"{r['source']}: {r['reason']}" for r in records if r["kind"] == "unavailable"]
    if start is None or end is None:
        reason = "; ".join(missing) or f"no {start_event}/{end_event} markers in the trace"
        return Analysis("not_measured", reason, None, None, None)
    t0, t1 = parse_time(start["t"]), parse_time(end["t"])
    seconds = (t1 - t0).total_seconds()
    result = Analysis("not_measured", None, start["t"], end["t"], seconds)
    counters, samples = _series(records, t0, t1, minimums, result.gaps)
    result.series = counters + samples
    counted = _counted(counters)
    if not counted:
        result.reason = "; ".join(missing) or "no energy counter in the trace"
        return result
    # an instrument that gave power samples but no energy counter for a device
    have = {(s.source, s.device) for s in counters}
    lacking = sorted({(s.source, s.device) for s in samples} - have)
    problems = [f"{s.name}: {p}" for s in counted for p in s.problems]
    problems += [
        f"{src} device {dev}: power samples but no energy counter (samples are a "
        "cross-check, never the energy)"
        for src, dev in lacking
    ]
    if problems:
        result.reason = "; ".join(problems)
        return result
    energy = sum(s.energy_j or 0.0 for s in counted)
    result.energy_source = "+".join(sorted({s.source for s in counted}))
    short = short_window(seconds, minimums)
    short += [
        f"{s.name} read {s.readings} time(s) inside the window, fewer than the "
        f"protocol's {minimums.min_readings} samples per window"
        for s in counted
        if s.readings < minimums.min_readings
    ]
    short += [
        f"{s.name} updated {s.updates} time(s) inside the window, fewer than the "
        f"declared minimum of {minimums.counter_updates}"
        for s in counted
        if s.updates < minimums.counter_updates
    ]
    return result.conclude(energy, short)


def short_window(seconds: float, minimums: Minimums) -> list[str]:
    """Why a window of SECONDS is shorter than the declared sampling periods (none when it
    is not): the first reason of a `below_resolution` window, whatever the instrument."""
    if seconds >= minimums.window_seconds:
        return []
    return [
        f"window {seconds:.3f} s is shorter than the declared minimum of "
        f"{minimums.sample_periods} sampling periods ({minimums.window_seconds:.3f} s)"
    ]


def _counted(counters: list[Series]) -> list[Series]:
    """The series whose energy is the region's: NVML GPU, RAPL packages (else psys)."""
    nvml = [s for s in counters if s.source == "nvml"]
    rapl = [s for s in counters if s.source == "rapl" and s.domain == "package"]
    if not rapl:
        rapl = [s for s in counters if s.source == "rapl" and s.domain == "psys"]
    return nvml + rapl


def _series(
    records: list[Record], t0: datetime, t1: datetime, mins: Minimums, gaps: list[str]
) -> tuple[list[Series], list[Series]]:
    groups: dict[tuple[str, str, str, int, str], list[Record]] = {}
    for r in records:
        if r["kind"] in ("counter", "sample"):
            key = (r["kind"], r["source"], r["domain"], int(r.get("device", 0)), r["field"])
            groups.setdefault(key, []).append(r)
    counters: list[Series] = []
    samples: list[Series] = []
    gap_limit = mins.gap_factor * mins.sampling_interval_s
    for (kind, source, domain, device, fld), rows in sorted(groups.items()):
        s = Series(source, domain, device, fld, kind)
        inside = [(parse_time(r["t"]), r) for r in rows if t0 <= parse_time(r["t"]) <= t1]
        s.readings = len(inside)
        times = [t0, *(t for t, _ in inside), t1] if kind == "sample" else [t for t, _ in inside]
        steps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
        s.max_gap_s = max(steps) if steps else None
        if s.max_gap_s is not None and s.max_gap_s > gap_limit:
            gaps.append(
                f"{s.name}: {s.max_gap_s:.3f} s between two readings (sampling "
                f"period {mins.sampling_interval_s} s)"
            )
        if kind == "sample":
            watts = [float(r["watts"]) for _, r in inside]
            s.mean_watts = sum(watts) / len(watts) if watts else None
            samples.append(s)
            continue
        if len(inside) < 2:
            s.problems.append(
                f"{len(inside)} reading(s) inside the window, fewer than the two "
                "needed (a missing counter)"
            )
            counters.append(s)
            continue
        unit = UNIT_J[inside[0][1]["unit"]]
        total = 0
        for (ta, a), (tb, b) in itertools.pairwise(inside):
            delta = int(b["value"]) - int(a["value"])
            if delta != 0:
                s.updates += 1
            max_range = b.get("max_range")
            if delta < 0 and max_range is None:
                s.problems.append(
                    f"the counter went down from {a['value']} to {b['value']} "
                    "(a driver reload: a reset, not a wrap)"
                )
                break
            if max_range is not None:
                safe = max_range * UNIT_J[b["unit"]] / mins.max_watts
                if (tb - ta).total_seconds() > safe:
                    s.problems.append(
                        f"{(tb - ta).total_seconds():.3f} s between two reads, "
                        f"longer than the {safe:.3f} s in which the counter "
                        "cannot wrap twice"
                    )
                    break
                if delta < 0:
                    delta += int(max_range)
                    s.wraps += 1
            total += delta
        if not s.problems:
            s.energy_j = total * unit
        counters.append(s)
    return counters, samples
