"""One power series of a trace over a window (`series`: what it observes, its energy, whether
it covers the window), and each energy counter against the same instrument's power samples
(`counter_cross_checks`, B0605).

**Counters against samples**: a summed counter's average power over the stretch its readings
observe, against the same instrument's power samples (same domain and device; an
instantaneous reading before a rolling average, then by `rank`) integrated as for any
interval reading over the seconds of the window they cover; judged only when the samples are
dense (`sample_periods` readings, no spacing or unobserved edge over `gap_factor` periods).
Allowance: `CROSS_REL` of the larger + `CROSS_ABS_W`, + the highest sample x the unobserved
share of the window, + for a rolling average the highest sample x its `averaging_s` / window;
beyond `CROSS_ERROR_FACTOR` allowances they disagree, between one and that many is the grey
band.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

import polars as pl

from auditor.protocols.b.facts.claims import FLOAT_EPS

CROSS_REL = 0.05
"""A power reading may be off by this share of the draw (NVML's nvmlDeviceGetPowerUsage: "on
Fermi and Kepler GPUs the reading is accurate to within +/- 5% of current power draw"; NVML
gives no figure for newer boards, EVIDENCE.md none at all: not verified on a GPU here)."""
CROSS_ABS_W = 5.0
"""... plus this many watts (nvidia-smi's manual for power.draw on older boards: "accurate to
within +/- 5 watts"), which dominates at the low draws of an idle GPU."""
CROSS_ERROR_FACTOR = 3.0
"""A counter and its samples further apart than this many allowances disagree (an error: one
of them is not the measurement); between one allowance and this many: the grey band (a
warning)."""


@dataclass(frozen=True)
class Series:
    """One (domain, device, source) of a trace over a window."""

    domain: str
    device: int | None
    source: str
    kind: str
    """`counter` (cumulative energy read at instants) or `interval` (power over intervals)."""
    readings: int = 0
    """Readings over the window (counter readings inside it; intervals overlapping it)."""
    updates: int = 0
    """Counter changes inside the window."""
    energy_j: float = 0.0
    max_interval_s: float | None = None
    covered: bool = False
    uncovered: str | None = None
    observed: tuple[float, float] | None = None
    """The stretch of the window the readings observe (seconds from the window's start): a
    counter's first and last reading inside it; intervals' first and last overlap with it."""
    observed_s: float = 0.0
    """Seconds of the window the readings observe (intervals: the sum of their overlaps)."""

    @property
    def name(self) -> str:
        dev = "" if self.device is None else f" {self.device}"
        return f"{self.domain}{dev} ({self.source})"


def series(
    g: pl.DataFrame,
    dom: str,
    dev: int | None,
    src: str,
    kind: str,
    t0: float,
    t1: float,
    period: float | None,
    max_watts: float | None = None,
) -> Series:
    """The series of rows G (columns `s`, `e`: seconds from the window's start) over the
    window [T0, T1]. A wrapping counter (`wrap_j`) read less often than it can wrap at
    MAX_WATTS (the declared ceiling of its zone) does not cover the window: a second wrap
    between two reads would hide a whole range."""
    rows = g.select("s", "e", "energy_j", "watts", "interval_s").rows()
    if kind == "counter":
        wrap = cast(float | None, g["wrap_j"].drop_nulls().min()) if "wrap_j" in g.columns else None
        safe = wrap / max_watts if wrap and max_watts else None
        inside = [(a, b, en) for a, b, en, _, _ in rows if a is not None and t0 <= a and b <= t1]
        reads = sorted({x for a, b, _ in inside for x in (a, b)})
        steps = [b - a for a, b, _ in inside]
        edge = period if period else 0.0
        uncovered = None
        longest = max(steps, default=0.0)
        if len(reads) < 2:
            uncovered = f"{len(reads)} reading(s) inside the window, fewer than the two needed"
        elif safe is not None and longest > safe:
            uncovered = (
                f"{longest:.3f} s between two reads, longer than the {safe:.3f} s in "
                f"which the counter cannot wrap twice (its {wrap:g} J range at the "
                f"declared {max_watts:g} W)"
            )
        elif reads[0] - t0 > edge or t1 - reads[-1] > edge:
            uncovered = (
                f"first reading {reads[0] - t0:.3f} s after the window starts, last "
                f"{t1 - reads[-1]:.3f} s before it ends (more than one sampling "
                "period unobserved)"
            )
        return Series(
            dom,
            dev,
            src,
            kind,
            readings=len(reads),
            updates=sum(1 for _, _, en in inside if en),
            energy_j=sum(en for _, _, en in inside if en),
            max_interval_s=max(steps) if steps else None,
            covered=uncovered is None,
            uncovered=uncovered,
            observed=(reads[0], reads[-1]) if len(reads) >= 2 else None,
            observed_s=reads[-1] - reads[0] if len(reads) >= 2 else 0.0,
        )
    timed = sorted((a, b, en, w) for a, b, en, w, _ in rows if a is not None and b > a)
    over = [(a, b, en, w) for a, b, en, w in timed if min(b, t1) - max(a, t0) > 0]
    energy = 0.0
    for a, b, en, watts in over:
        joules = en if en is not None else (watts or 0.0) * (b - a)
        energy += joules * (min(b, t1) - max(a, t0)) / (b - a)
    # how far apart the readings are: each reading's end after the previous one's (the
    # first: its own interval), so a missed reading shows whatever the tool's intervals say
    spacing = [b - a for a, b, _, _ in over[:1]]
    spacing += [b - prev for (_, prev, _, _), (_, b, _, _) in itertools.pairwise(over)]
    first = min((a for a, _, _, _ in timed), default=None)
    last = max((b for _, b, _, _ in timed), default=None)
    uncovered = None
    if first is None or last is None:
        uncovered = "no reading covers an interval"
    elif first > t0 or last < t1:
        uncovered = (
            f"the trace spans {_span_text(first, last)}, the window "
            f"{_span_text(t0, t1)}: the window is not inside it"
        )
    return Series(
        dom,
        dev,
        src,
        kind,
        readings=len(over),
        energy_j=energy,
        max_interval_s=max(spacing) if spacing else None,
        covered=uncovered is None,
        uncovered=uncovered,
        observed=((max(over[0][0], t0), min(max(b for _, b, _, _ in over), t1)) if over else None),
        observed_s=sum(min(b, t1) - max(a, t0) for a, b, _, _ in over),
    )


def _span_text(a: float, b: float) -> str:
    """An interval in seconds from the window's start, in words."""
    return f"{a:+.3f} s to {b:+.3f} s from the window's start"


@dataclass(frozen=True)
class CrossCheck:
    """A summed energy counter against the same instrument's power samples (same domain and
    device) over a trial's window. `status`: `agrees`, `grey` (beyond the allowance, within
    `CROSS_ERROR_FACTOR` of it), `disagrees`, or `sparse` (the samples are too few or too far
    apart over the window to judge by: no judgement)."""

    counter: str
    """The counter's source (`nvml:nvmlDeviceGetTotalEnergyConsumption`)."""
    samples: str
    """The sample source compared (`nvml:POWER_INSTANT`)."""
    domain: str
    device: int | None
    status: str
    reason: str | None = None
    counter_w: float | None = None
    """The counter's average power: its energy over the stretch its readings observe."""
    samples_w: float | None = None
    """The samples' average power: their energy over the window over the seconds of the
    window their intervals cover."""
    readings: int = 0
    allowance_w: float | None = None

    @property
    def name(self) -> str:
        dev = "" if self.device is None else f" {self.device}"
        return f"{self.domain}{dev}"

    @property
    def ratio(self) -> float | None:
        """The counter's power over the samples' (None when the samples say 0 W)."""
        if self.counter_w is None or not self.samples_w:
            return None
        return self.counter_w / self.samples_w


def counter_cross_checks(
    frame: pl.DataFrame, summed: tuple[Series, ...], t0: float, t1: float, mins: Mapping[str, float]
) -> list[CrossCheck]:
    """Each covered counter of SUMMED against the interval readings of the same instrument,
    domain and device in FRAME over the window [T0, T1] (seconds from its start), where the
    trace has such samples (our runner writes NVML's; RAPL gives none)."""
    period = mins.get("sampling_interval_s")
    gap = mins["gap_factor"] * period if period else None
    need = max(2, math.ceil(mins.get("sample_periods", 0.0)))
    samples = frame.filter((pl.col("kind") == "interval") & pl.col("watts").is_not_null())
    wall = t1 - t0
    out: list[CrossCheck] = []
    for c in summed:
        if c.kind != "counter" or not c.covered or c.observed_s <= 0 or wall <= 0:
            continue
        instrument = frame.filter(pl.col("source") == c.source)["instrument"].first()
        mine = samples.filter(
            (pl.col("instrument") == instrument)
            & (pl.col("domain") == c.domain)
            & pl.col("device").eq_missing(c.device)
        )
        if mine.is_empty():
            continue
        best = (
            mine.select("source", "rank", "averaging_s")
            .unique()
            .sort(pl.col("averaging_s").is_not_null(), "rank", "source")
            .row(0)
        )
        src, averaging = best[0], best[2]
        g = mine.filter(pl.col("source") == src).sort("e")
        sm = series(g, c.domain, c.device, src, "interval", t0, t1, period)
        reason = None
        if gap is None:
            reason = "no declared sampling period to judge the samples' density by"
        elif sm.readings < need or sm.observed is None:
            reason = f"{sm.readings} sample(s) over the window, fewer than {need}"
        elif sm.max_interval_s is not None and sm.max_interval_s > gap:
            reason = (
                f"{sm.max_interval_s:.3f} s between two samples, more than "
                f"{mins['gap_factor']:g} x the declared {period:g} s"
            )
        elif sm.observed[0] - t0 > gap or t1 - sm.observed[1] > gap:
            reason = (
                f"the samples leave {sm.observed[0] - t0:.3f} s at the window's start "
                f"and {t1 - sm.observed[1]:.3f} s at its end unobserved"
            )
        if reason is not None:
            out.append(
                CrossCheck(
                    c.source, src, c.domain, c.device, "sparse", reason, readings=sm.readings
                )
            )
            continue
        top = (
            cast(float | None, g.filter((pl.col("e") > t0) & (pl.col("s") < t1))["watts"].max())
            or 0.0
        )
        counter_w = c.energy_j / c.observed_s
        samples_w = sm.energy_j / sm.observed_s
        allowance = (
            CROSS_REL * max(counter_w, samples_w)
            + CROSS_ABS_W
            + top * max(0.0, wall - sm.observed_s) / wall
        )
        if averaging:
            allowance += top * averaging / wall
        diff = abs(counter_w - samples_w)
        status = (
            "agrees"
            if diff <= allowance + FLOAT_EPS
            else "grey"
            if diff <= CROSS_ERROR_FACTOR * allowance + FLOAT_EPS
            else "disagrees"
        )
        out.append(
            CrossCheck(
                c.source,
                src,
                c.domain,
                c.device,
                status,
                None,
                counter_w,
                samples_w,
                sm.readings,
                allowance,
            )
        )
    return out
