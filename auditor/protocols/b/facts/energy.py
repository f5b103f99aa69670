"""The energy of one trial over its window, from its raw power trace, whatever tool wrote it:
the power frame's own columns say what each reading is (`kind`, `role`, `domain`, `includes`,
`rank`, `instrument`: schemas/power-samples.frame.json), so no reader is known by name here.

- **Which readings are summed** (`choose`): readings whose `role` is `energy` (a reading
  kept only to cross-check a counter never is; a device whose instrument gave only such
  readings has no energy: `unavailable`). One source per domain and device: a counter before
  interval readings, then the lowest `rank`, then the source's name. The domains summed:
  one that holds the CPU, the first present of `HOSTS` (combined, package, ppt, psys), with
  every device reading (`PARTS`: cpu, gpu, ane, npu) whose device that domain does not hold
  (`includes`); without such a domain, every device reading. Never a device twice.
- **The unit a policy computes on** must be held by what is summed: the CPU for a cpu-only
  policy, one of its accelerator's devices for an accelerator policy, else the window is not
  measured (`no_domain`): the board's idle draw alone would misstate a CPU policy's cost. A
  trace that cannot measure the window at all says so first (`not_covered`, `gap`); one too
  coarse for it says so after (`below_resolution`).
- **Energy over the window** [t0, t1]:
  - a cumulative counter: the sum of the deltas between consecutive readings both inside the
    window (the last reading inside minus the first, wraps resolved by the reader); the
    stretches between a marker and the nearest reading are left out and must each be under
    one declared sampling period, else the counter does not cover the window;
  - a power reading over an interval (powermetrics' measured interval, a sensor log's or
    nvidia-smi's point reading held since the previous one): watts x the part of its interval
    inside the window, pro rata (`energy_j` x overlap / interval where the tool gives its
    energy). The window must lie inside the span of the intervals, and no two readings may be
    more than `gap_factor` declared sampling periods apart;
  - average power = energy / wall time; joules per inference = energy / answers.
- **Impossible readings** (`consistency`): a trace holding one measures no window
  (`inconsistent`).
- **Time order**: a trace whose time goes back anywhere (the reader's `order` warning: an
  edited or merged file, a clock step) measures no window (`disordered`); a reading at the
  time of the previous one (`repeat`) is only left without an interval.
- **Resolution**: a window shorter than the declared minimum (`energy.minimums`:
  `window_seconds`), a series (counter or intervals) with fewer readings over the window
  than `MIN_SAMPLES` (10, the protocol's floor) or the declared `sample_periods` if higher,
  or a counter that changed fewer than `counter_updates` times inside it gives no figure
  (`below_resolution`): a claim from it is unsupported.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

import polars as pl

import schemas
from auditor.protocols.b.facts.consistency import inconsistencies
from auditor.protocols.b.facts.crosscheck import CrossCheck, Series, counter_cross_checks, series
from auditor.protocols.b.facts.declared import Policy, minimums

if TYPE_CHECKING:
    from auditor.protocols.b.view import Evidence, RunView

HOSTS = ("combined", "package", "ppt", "psys")
"""Domains that hold the CPU (and what their `includes` says), in the order one is chosen."""
PARTS = ("cpu", "gpu", "ane", "npu")
"""Device domains, summed beside a host domain where it does not hold them."""
SUMMED = (
    "one reading that holds the CPU (combined, else package, else PPT, else the "
    "platform) with the accelerators' own readings it does not hold; without one, the "
    "CPU, GPU, Neural Engine and NPU readings"
)
"""What a window's energy sums, in words."""
MIN_SAMPLES = schemas.convention("B", "min_samples_per_window")
"""The protocol's floor (its decision on B6): any power source gives at least this many
samples inside each inference window, else the window has no energy figure; a run's own
declared `sample_periods` can only raise it."""
CURVE_PAD = 0.5
"""The power curve shows this many windows of trace before and after the window."""
UNIT_NAMES = {
    "cpu": "the CPU packages (RAPL, or a tool's CPU package reading)",
    "gpu": "the GPU (NVML, or a tool's GPU board reading)",
    "ane": "the Neural Engine",
    "npu": "the NPU",
}


@dataclass(frozen=True)
class Window:
    """What the energy of a trial is computed over."""

    start: int | None
    end: int | None
    """Epoch nanoseconds."""
    policy: Policy | None
    answers: int
    """Lines of its outputs file (joules per inference divide by them)."""


@dataclass(frozen=True)
class Energy:
    """A trial's energy over its window, or why there is none."""

    status: str
    """`measured`, or why not: `no_trace`, `fault`, `disordered` (time goes back in the
    trace), `inconsistent` (a reading no instrument gives: `consistency`), `unavailable`,
    `no_window`, `no_domain`, `not_covered`, `gap`, `below_resolution`."""
    reason: str | None
    trace: str | None = None
    tool: str | None = None
    source: str | None = None
    """The instrument(s), as trials.csv's `energy_source` names them (nvml, rapl, nvml+rapl,
    powermetrics, hwinfo, nvidia-smi)."""
    domains: tuple[str, ...] = ()
    """`domain[:device]` of every series summed."""
    includes: frozenset[str] = frozenset()
    """The devices whose power the summed series hold."""
    series: tuple[Series, ...] = ()
    energy_j: float | None = None
    """The energy of the series over the window (also when not `measured`, for the report;
    only a `measured` one supports a figure)."""
    average_power_w: float | None = None
    joules_per_inference: float | None = None
    span: tuple[float, float] | None = None
    """The trace's span over the summed series, in seconds from the window's start."""
    curve: tuple[tuple[float, float], ...] = ()
    """The summed power of those series over time, (seconds from the window's start,
    watts) at each step, from half a window before it to half a window after (the report's
    figure)."""
    cross_checks: tuple[CrossCheck, ...] = field(default=())
    """Each summed counter against the same instrument's power samples over the window."""

    @property
    def measured(self) -> bool:
        return self.status == "measured"


def choose(frame: pl.DataFrame) -> tuple[pl.DataFrame, str | None]:
    """The rows of FRAME a window's energy sums (the module's rules), and why there is no
    energy when an instrument gave readings for a device only to cross-check a counter it
    lacks."""
    energy = frame.filter(pl.col("role") == "energy")
    checks = frame.filter(pl.col("role") != "energy")
    have = set(energy.select("instrument", "device").unique().iter_rows())
    lacking = sorted(
        set(checks.select("instrument", "device").unique().iter_rows()) - have, key=str
    )
    if lacking:
        return frame.clear(), "; ".join(
            f"{i} device {d}: power samples but no energy counter (samples are a cross-check, "
            "never the energy)"
            for i, d in lacking
        )
    best = (
        energy.select("domain", "device", "source", "kind", "rank")
        .unique()
        .sort(pl.col("kind") != "counter", "rank", "source")
        .unique(subset=["domain", "device"], keep="first", maintain_order=True)
    )
    present = set(best["domain"].to_list())
    host = next((d for d in HOSTS if d in present), None)
    if host is None:
        wanted = [d for d in PARTS if d in present]
    else:
        held = set().union(
            *(
                set(filter(None, x.split(",")))
                for x in energy.filter(pl.col("domain") == host)["includes"].unique().to_list()
            )
        )
        wanted = [host, *[d for d in PARTS if d in present and d not in held]]
    keep = best.filter(pl.col("domain").is_in(wanted)).select("domain", "device", "source")
    return energy.join(keep, on=["domain", "device", "source"], how="semi", nulls_equal=True), None


def _includes(rows: pl.DataFrame) -> frozenset[str]:
    return frozenset(d for x in rows["includes"].unique().to_list() for d in x.split(",") if d)


def unit_not_measured(policy: Policy | None, includes: frozenset[str]) -> str | None:
    """The unit POLICY computes on that the summed readings (holding INCLUDES) leave out, in
    words; None when they hold it (or nothing is declared to say)."""
    if policy is None:
        return None
    if not policy.accelerator:
        return None if "cpu" in includes else UNIT_NAMES["cpu"]
    devices = policy.accelerator & UNIT_NAMES.keys()
    if devices and not devices & includes:
        return " or ".join(UNIT_NAMES[d] for d in sorted(devices))
    return None


def trial_energy(view: RunView, ev: Evidence | None, w: Window) -> Energy:
    """The energy over window W from its trace EV (the module's rules)."""
    if ev is None:
        return Energy("no_trace", "no power trace for this trial")
    base: dict[str, Any] = {"trace": ev.path, "tool": ev.tool}
    if not ev.usable:
        return Energy("fault", f"{ev.path} could not be read (see its B0002 findings)", **base)
    if ev.time_back:
        lines = ", ".join(str(n) for n in ev.time_back[:5])
        return Energy(
            "disordered",
            f"{ev.path}: time goes back at line(s) {lines} (an edited "
            "or merged trace, or a clock step): its intervals are not the tool's",
            **base,
        )
    bad = inconsistencies(view).get(ev.path)
    if bad:
        return Energy(
            "inconsistent",
            f"{ev.path}: {len(bad)} reading(s) no instrument gives, "
            f"the first at line {bad[0].line}: {bad[0].what} (expected "
            f"{bad[0].expected})",
            **base,
        )
    if ev.frame is None or ev.frame.is_empty():
        reasons = [
            f"{u.get('source')}: {u.get('reason')}"
            for u in ev.meta.get("unavailable") or []
            if isinstance(u, Mapping)
        ]
        return Energy(
            "unavailable",
            "; ".join(reasons) or "; ".join(ev.content) or "the trace holds no power reading",
            **base,
        )
    return window_energy(ev.frame, w, minimums(view), base)


def window_energy(
    frame: pl.DataFrame, w: Window, mins: Mapping[str, float], base: Mapping[str, Any] | None = None
) -> Energy:
    """The energy over window W from a power frame's readings (the module's rules), whoever
    wrote the frame; MINS: the run's declared `energy.minimums`. The one computation of a
    window's energy: `trial_energy` calls it for a trial, and the runner's own analysis
    (`runner.b.energy.window`) is held to agree with it (tests/test_window_agreement.py)."""
    base = dict(base or {})
    if w.start is None or w.end is None or w.end <= w.start:
        return Energy(
            "no_window",
            "the trial's window is not known (no markers in the trace, no started_at/ended_at)",
            **base,
        )
    # seconds from the window's start: float epoch seconds would lose the microseconds
    origin = w.start // 1000
    frame = frame.with_columns(
        ((pl.col("start").dt.epoch("us") - origin) / 1e6).alias("s"),
        ((pl.col("end").dt.epoch("us") - origin) / 1e6).alias("e"),
    )
    t0, t1 = (w.start - origin * 1000) / 1e9, (w.end - origin * 1000) / 1e9
    chosen, why = choose(frame)
    if why:
        return Energy("unavailable", why, **base)
    source = "+".join(sorted(set(chosen["instrument"].to_list()))) or None
    if chosen.is_empty():
        return Energy(
            "no_domain",
            f"no power domain the auditor sums in this {base.get('tool')} trace (it sums {SUMMED})",
            **base,
            source=source,
        )
    includes = _includes(chosen)
    period = mins.get("sampling_interval_s")
    found = tuple(
        series(g, dom, dev, src, str(g["kind"][0]), t0, t1, period, mins.get("rapl_max_watts"))
        for (dom, dev, src), g in chosen.sort("e").group_by(
            "domain", "device", "source", maintain_order=True
        )
    )
    energy = sum(s.energy_j for s in found)
    # Float64 columns: a group's bounds are floats (`s` null where a reading has no start)
    spans = [
        (cast(float | None, g["s"].min()), cast(float, g["e"].max()))
        for _, g in chosen.group_by("domain", "device")
    ]
    starts = [a if a is not None else b for a, b in spans]
    wall = t1 - t0
    e = Energy(
        "measured",
        None,
        **base,
        source=source,
        includes=includes,
        domains=tuple(
            sorted({s.domain + ("" if s.device is None else f":{s.device}") for s in found})
        ),
        series=found,
        energy_j=energy,
        span=(max(starts), min(b for _, b in spans)) if spans else None,
        curve=_curve(chosen, -CURVE_PAD * wall, t1 + CURVE_PAD * wall),
        average_power_w=energy / wall if wall > 0 else None,
        joules_per_inference=energy / w.answers if w.answers else None,
        cross_checks=(
            tuple(counter_cross_checks(frame, found, t0, t1, mins))
            if any(s.kind == "counter" for s in found)
            else ()
        ),
    )
    status, reason = _covered(found, mins, period)
    lacking = unit_not_measured(w.policy, includes)
    if status is None and lacking:
        status, reason = (
            "no_domain",
            (
                f"{lacking}, where this policy computes, is not "
                f"measured: {source} alone would misstate its cost"
            ),
        )
    if status is None:
        status, reason = _resolved(found, wall, mins)
    return replace(e, status=status, reason=reason) if status else e


def _covered(
    found: tuple[Series, ...], mins: Mapping[str, float], period: float | None
) -> tuple[str | None, str | None]:
    """Why the series cannot measure the window at all (`not_covered`, `gap`), or (None,
    None)."""
    uncovered = [f"{s.name}: {s.uncovered}" for s in found if not s.covered]
    if uncovered:
        return "not_covered", "; ".join(uncovered)
    if period:
        limit = mins["gap_factor"] * period
        gaps = [
            s
            for s in found
            if s.kind == "interval" and s.max_interval_s is not None and s.max_interval_s > limit
        ]
        if gaps:
            return "gap", "; ".join(
                f"{s.name}: {s.max_interval_s:.3f} s between two readings, "
                f"more than {mins['gap_factor']:g} x the declared "
                f"{period:g} s"
                for s in gaps
            )
    return None, None


def _resolved(
    found: tuple[Series, ...], wall: float, mins: Mapping[str, float]
) -> tuple[str | None, str | None]:
    """Why the window is too short or too coarsely read for a figure (`below_resolution`),
    or (None, None)."""
    short = []
    if wall < mins.get("window_seconds", 0.0):
        short.append(
            f"window {wall:.3f} s is shorter than the declared minimum of "
            f"{mins['window_seconds']:g} s"
        )
    declared = mins.get("sample_periods", 0)
    need = max(MIN_SAMPLES, declared)
    short += [
        f"{s.name}: {s.readings} reading(s) over the window, fewer than "
        + (
            f"the declared {declared:g}"
            if declared >= MIN_SAMPLES
            else f"the protocol's {MIN_SAMPLES} samples per window"
        )
        for s in found
        if s.readings < need
    ]
    short += [
        f"{s.name}: updated {s.updates} time(s) inside the window, fewer than the "
        f"declared {mins['counter_updates']:g}"
        for s in found
        if s.kind == "counter" and s.updates < mins.get("counter_updates", 0)
    ]
    return ("below_resolution", "; ".join(short)) if short else (None, None)


def _curve(chosen: pl.DataFrame, lo: float, hi: float) -> tuple[tuple[float, float], ...]:
    """Steps of the summed power of CHOSEN's series over [LO, HI]: at every interval edge,
    the sum of each series' reading over the interval that holds the next instant."""
    rows = [
        r
        for r in chosen.select("domain", "device", "source", "s", "e", "watts").rows()
        if r[3] is not None and r[5] is not None and r[4] > lo and r[3] < hi
    ]
    by: dict[tuple, list[tuple[float, float, float]]] = {}
    for d, dev, src, a, b, w in rows:
        by.setdefault((d, dev, src), []).append((a, b, w))
    for ivs in by.values():
        ivs.sort()
    bounds = sorted({min(hi, max(lo, x)) for _, _, _, a, b, _ in rows for x in (a, b)})
    out: list[tuple[float, float]] = []
    for a, b in itertools.pairwise(bounds):
        mid = (a + b) / 2
        total = 0.0
        for ivs in by.values():
            k = bisect.bisect_right(ivs, (mid, math.inf, math.inf)) - 1
            if k >= 0 and ivs[k][0] <= mid < ivs[k][1]:
                total += ivs[k][2]
        out.append((a, total))
    if bounds:
        out.append((bounds[-1], out[-1][1] if out else 0.0))
    return tuple(out)
