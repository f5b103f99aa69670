"""Whether each power trace's readings are its own samples, found by their values and times
(B6): readings spliced from another trace, and readings duplicated at shifted times. Whole
copies of another trial's trace are `trials.copied_traces` (B0607).

A **sample** is every power reading a trace holds at one instant (one HWiNFO row, one
powermetrics sample, one poll of our runner's instruments): the set of (source, device,
watts to the microwatt) of the frame's rows that share an `end`, in time order; its line
is the first of them. The thresholds are the protocol's
(`schemas/conventions.json`):

- **Duplicated readings** (`duplicated_readings`): a pair is two consecutive samples of at
  least `min_readings` readings that are equal, at two times, the samples before and after
  them different: a sample copied one step later. A trace in which at least `min_count`
  pairs make up at least `min_share` of the samples holds readings duplicated onto shifted
  times (a 2 s log padded to 1 Hz): they are not samples. A steady draw read coarsely gives
  long runs of equal samples, never pairs alone, and is never flagged.
- **Spliced readings** (`spliced_readings`): a run of `run` consecutive samples, each of at
  least `min_readings` readings and `distinct` different ones among them, found in two
  traces of the run (the trials' and the power-state files') under other times was copied
  from one into the other: live sensors never repeat such a run (two files cut from one log
  share runs at the same instants: not a copy). Traces whose whole sequences are the same
  are B0607's; of two traces the later one (by its first sample, then its path) is the one
  spliced. A trace repeating a run of its own (a periodic load) is not judged.
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

DUPLICATED = schemas.convention("B", "duplicated_readings")
SPLICED = schemas.convention("B", "spliced_readings")

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
    """A trace whose samples were copied one step later (pairs of equal samples)."""

    path: str
    samples: int
    repeats: int
    """Pairs: samples that repeat the one before, alone."""
    lines: tuple[int, ...]
    """The lines of the samples that repeat the one before."""


@dataclass(frozen=True)
class Splice:
    """A run of samples of one trace found in another."""

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
    g = (
        f.with_columns(
            pl.col("end").dt.epoch("us").alias("t"),
            pl.col("device").fill_null(-1),
            pl.col("watts").round(6),
        )
        .group_by("t")
        .agg(
            pl.col("line").min(),
            pl.struct("source", "device", "watts").sort_by("source", "device", "watts").alias("r"),
        )
        .sort("t", "line")
    )
    values = tuple(
        tuple((d["source"], d["device"], d["watts"]) for d in r) for r in g["r"].to_list()
    )
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
        # runs of equal consecutive samples: (first index, length)
        runs: list[list[int]] = []
        for i, v in enumerate(s.values):
            if runs and v == s.values[runs[-1][0]] and s.times[i] != s.times[i - 1]:
                runs[-1][1] += 1
            else:
                runs.append([i, 1])
        pairs = [i for i, n in runs if n == 2 and len(s.values[i]) >= DUPLICATED["min_readings"]]
        if len(pairs) >= DUPLICATED["min_count"] and 2 * len(pairs) >= DUPLICATED[
            "min_share"
        ] * len(s.values):
            out.append(
                Duplicated(s.path, len(s.values), len(pairs), tuple(s.lines[i + 1] for i in pairs))
            )
    return tuple(out)


def _runs(s: Samples) -> Iterator[tuple[int, tuple[Sample, ...]]]:
    """(start index, run) of each run of `SPLICED["run"]` samples that can show a splice."""
    n = SPLICED["run"]
    for i in range(len(s.values) - n + 1):
        run = s.values[i : i + n]
        if (
            all(len(v) >= SPLICED["min_readings"] for v in run)
            and len(set(run)) >= SPLICED["distinct"]
        ):
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
            if other.path == s.path:
                continue  # a trace repeating a run of its own: a periodic load, not judged
            if other.values == s.values:
                continue  # a whole copy: B0607's
            if s.times[i : i + n] == other.times[j : j + n]:
                continue  # the same instants: two files cut from one log, not a copy
            key = (s.path, other.path)
            if key not in found:
                found[key] = Splice(
                    s.path,
                    (s.lines[i], s.lines[i + n - 1]),
                    other.path,
                    (other.lines[j], other.lines[j + n - 1]),
                )
    return tuple(found.values())
