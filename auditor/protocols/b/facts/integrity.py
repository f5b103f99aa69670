"""Whether each power trace's readings are its own samples, found by their values and times
(B6): readings spliced from another trace, and readings duplicated at shifted times. Whole
copies of another trial's trace are `trials.copied_traces` (B0607).

A **sample** is every power reading a trace holds at one instant (one HWiNFO row, one
powermetrics sample, one poll of our runner's instruments): the set of (source, device,
watts to the microwatt) of the frame's rows that share an `end`, in time order; its line
is the first of them. The thresholds are the protocol's
(`schemas/residency.conventions.json`):

- **Duplicated readings** (`duplicated_readings`): a sample of at least `min_readings`
  readings that equals the one before it, at another time, repeats it. A trace whose
  samples take at least three different values and where at least `min_count` samples and
  `min_share` of them repeat their predecessor holds readings copied onto shifted times
  (a 2 s log made to look like 1 Hz): they are not samples. A steady draw read coarsely
  (a constant trace) is never flagged: it has fewer than three different samples.
- **Spliced readings** (`spliced_readings`): a run of `run` consecutive samples, each of at
  least `min_readings` readings and `distinct` different ones among them, found in two traces
  of the run (the trials' and the power-state files'), or twice in one trace, was copied from
  one into the other under other times: live sensors never repeat such a run (two files
  cut from one log share runs at the same instants: not a copy). Traces whose whole
  sequences are the same are B0607's; of two traces the later one (by its first sample,
  then its path) is the one spliced.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

import schemas
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.b.view import Evidence, RunView

_CONV = schemas.conventions("residency")
DUPLICATED = _CONV["duplicated_readings"]
SPLICED = _CONV["spliced_readings"]

Sample = tuple[tuple[str, int, float], ...]


@dataclass(frozen=True)
class Samples:
    """A trace's samples in time order, with each one's first line and instant (epoch us)."""

    path: str
    values: tuple[Sample, ...]
    lines: tuple[int, ...]
    times: tuple[int, ...]


@dataclass(frozen=True)
class Duplicated:
    """A trace whose samples repeat their predecessors at shifted times."""

    path: str
    samples: int
    repeats: int
    lines: tuple[int, ...]
    """The lines of the samples that repeat the one before."""


@dataclass(frozen=True)
class Splice:
    """A run of samples of one trace found in another (or earlier in the same one)."""

    path: str
    lines: tuple[int, int]
    source: str
    source_lines: tuple[int, int]


def samples_of(ev: Evidence) -> Samples | None:
    """EV's samples (module docstring); None when EV is no readable trace."""
    if ev.family != "power" or ev.frame is None or ev.frame.is_empty():
        return None
    f = ev.frame.filter(pl.col("end").is_not_null() & pl.col("watts").is_not_null())
    if f.is_empty():
        return None
    g = (f.with_columns(pl.col("end").dt.epoch("us").alias("t"),
                        pl.col("device").fill_null(-1), pl.col("watts").round(6))
         .group_by("t").agg(pl.col("line").min(),
                            pl.struct("source", "device", "watts").sort_by(
                                "source", "device", "watts").alias("r"))
         .sort("t", "line"))
    values = tuple(tuple((d["source"], d["device"], d["watts"]) for d in r)
                   for r in g["r"].to_list())
    return Samples(ev.path, values, tuple(g["line"].to_list()), tuple(g["t"].to_list()))


def _traces(view: RunView) -> list[Samples]:
    ok = [t.key for t in trials(view) if t.status == "ok"]
    evs = [view.power[k] for k in ok if k in view.power]
    evs += [view.power_state[p] for p in sorted(view.power_state)]
    out = [s for ev in evs if (s := samples_of(ev)) is not None]
    return sorted(out, key=lambda s: (s.times[0], s.path))


@per_view
def duplicated_readings(view: RunView) -> tuple[Duplicated, ...]:
    """Each trace whose readings were duplicated at shifted times (module docstring)."""
    out = []
    for s in _traces(view):
        if len(set(s.values)) < 3:
            continue
        rep = tuple(s.lines[i] for i in range(1, len(s.values))
                    if len(s.values[i]) >= DUPLICATED["min_readings"]
                    and s.values[i] == s.values[i - 1] and s.times[i] != s.times[i - 1])
        if len(rep) >= DUPLICATED["min_count"] \
                and len(rep) >= DUPLICATED["min_share"] * len(s.values):
            out.append(Duplicated(s.path, len(s.values), len(rep), rep))
    return tuple(out)


def _runs(s: Samples) -> Iterator[tuple[int, tuple[Sample, ...]]]:
    """(start index, run) of each run of `SPLICED["run"]` samples that can show a splice."""
    n = SPLICED["run"]
    for i in range(len(s.values) - n + 1):
        run = s.values[i:i + n]
        if all(len(v) >= DUPLICATED["min_readings"] for v in run) \
                and len(set(run)) >= SPLICED["distinct"]:
            yield i, run


@per_view
def spliced_readings(view: RunView) -> tuple[Splice, ...]:
    """Each trace holding a run of another trace's samples (module docstring), once per pair
    of traces."""
    n = SPLICED["run"]
    seen: dict[tuple[Sample, ...], tuple[Samples, int]] = {}
    found: dict[tuple[str, str], Splice] = {}
    for s in _traces(view):
        for i, run in _runs(s):
            first = seen.get(run)
            if first is None:
                seen[run] = (s, i)
                continue
            other, j = first
            if other.path == s.path and i - j < n:
                continue  # overlapping runs of one trace: a repeating pattern, not a copy
            if other.path != s.path and other.values == s.values:
                continue  # a whole copy: B0607's
            if s.times[i:i + n] == other.times[j:j + n]:
                continue  # the same instants: two files cut from one log, not a copy
            key = (s.path, other.path)
            if key not in found:
                found[key] = Splice(s.path, (s.lines[i], s.lines[i + n - 1]), other.path,
                                    (other.lines[j], other.lines[j + n - 1]))
    return tuple(found.values())
