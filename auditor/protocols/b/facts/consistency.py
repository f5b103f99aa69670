"""Power readings a real instrument cannot give, found in a protocol B run's raw traces: a
reading that is negative, not finite or beyond any one device's draw (`MAX_DEVICE_WATTS`); a
CPU package below the sum of its own cores in the same sample; a combined reading that is
not the sum of its parts (CPU + GPU + Neural Engine) within the tool's rounding. A trace
holding one gives no energy figure for any window (`energy` status `inconsistent`): one bad
sample never makes a figure infinite, or a doctored package or total a cheaper policy. A
battery's charge rate (`SIGNED`) is negative when it discharges: that is no fault (B0205
reads it).

Samples are matched by their time and device; a domain's reading is taken from its first
source by `rank` (what the energy sums), so a tool's second reading of the same power does
not count twice."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.b.view import RunView

MAX_DEVICE_WATTS = 5000.0
"""No one CPU package, GPU board or accelerator draws more (a whole 8-GPU server draws about
10 kW over all its devices): a reading above is not a measurement."""
ROUNDING_W = 0.0015
"""Half a milliwatt per term of a sum a tool prints in whole milliwatts (powermetrics), over
the three parts of a combined reading."""
CORES_SLACK = (0.5, 0.05)
"""A package may read below its cores by this much (W, share): sensors of one poll are read
a few microseconds apart."""
SIGNED = frozenset({"battery"})
"""Domains whose reading may be negative: a battery's charge rate is negative when it gives
power (discharging)."""
SHOWN = 5
"""Inconsistent readings listed per trace (all are counted)."""


@dataclass(frozen=True)
class Inconsistency:
    """One impossible reading of a trace."""

    line: int
    what: str
    observed: float | None
    expected: str


def _first_sources(frame: pl.DataFrame) -> pl.DataFrame:
    """FRAME's readings of the best-ranked source of each domain and device."""
    best = (
        frame.select("domain", "device", "source", "rank")
        .unique()
        .sort("rank", "source")
        .unique(subset=["domain", "device"], keep="first")
    )
    return frame.join(
        best.select("domain", "device", "source"),
        on=["domain", "device", "source"],
        how="semi",
        nulls_equal=True,
    )


def inconsistencies_of(frame: pl.DataFrame) -> tuple[Inconsistency, ...]:
    """Every impossible reading of one power frame (the module's rules), in line order."""
    found: list[Inconsistency] = []
    for line, domain, watts, energy in frame.select(
        "line", "domain", "watts", "energy_j"
    ).iter_rows():
        signed = domain in SIGNED
        for name, value in (("power", watts), ("energy", energy)):
            if value is None:
                continue
            if not math.isfinite(value) or (value < 0 and not signed):
                found.append(
                    Inconsistency(
                        line, f"{domain} {name} {value!r}", value, "a finite reading, zero or more"
                    )
                )
            elif name == "power" and value > MAX_DEVICE_WATTS:
                found.append(
                    Inconsistency(
                        line,
                        f"{domain} power {value:.6g} W",
                        value,
                        f"at most {MAX_DEVICE_WATTS:g} W for one device",
                    )
                )
    timed = _first_sources(
        frame.filter(pl.col("end").is_not_null() & pl.col("watts").is_not_null())
    )
    by = (
        timed.group_by("end", "device")
        .agg(
            pl.col("line").min(),
            *[
                pl.col("watts").filter(pl.col("domain") == d).first().alias(d)
                for d in ("package", "combined", "cpu", "gpu", "ane")
            ],
            pl.col("watts").filter(pl.col("domain") == "core").sum().alias("cores"),
            (pl.col("domain") == "core").any().alias("has_cores"),
        )
        .sort("line")
    )
    for r in by.iter_rows(named=True):
        if r["package"] is not None and r["has_cores"]:
            slack = CORES_SLACK[0] + CORES_SLACK[1] * r["cores"]
            if r["package"] < r["cores"] - slack:
                found.append(
                    Inconsistency(
                        r["line"],
                        f"package {r['package']:.6g} W below its cores' {r['cores']:.6g} W",
                        r["package"],
                        f"at least {r['cores'] - slack:.6g} W",
                    )
                )
        parts = [r[d] for d in ("cpu", "gpu", "ane") if r[d] is not None]
        if r["combined"] is not None and len(parts) == 3:
            total = sum(parts)
            if abs(r["combined"] - total) > ROUNDING_W + 1e-3 * total:
                found.append(
                    Inconsistency(
                        r["line"],
                        f"combined {r['combined']:.6g} W, its parts (CPU + GPU + ANE) "
                        f"{total:.6g} W",
                        r["combined"],
                        f"{total:.6g} W",
                    )
                )
    return tuple(sorted(found, key=lambda x: x.line))


@per_view
def inconsistencies(view: RunView) -> dict[str, tuple[Inconsistency, ...]]:
    """Per power trace with impossible readings, those readings."""
    out = {}
    for ev in view.power.values():
        if ev.frame is not None and not ev.frame.is_empty():
            found = inconsistencies_of(ev.frame)
            if found:
                out[ev.path] = found
    return out
