"""Every trial of a protocol B run as the auditor recomputed it: its trials.csv row (typed
cells and cells as written), its outputs file's figures, its window and the energy over it,
and the groups of trials whose latencies are copies of one another.

**The window** of a trial: the `window_start`/`window_end` markers of its trace when its tool
writes markers (our runner); otherwise the trial's `started_at`/`ended_at` (the only
statement of the region a tool without markers has, checked against the latencies: they
cannot add up to more than the window). Wall time = end - start, to the nanosecond."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from auditor.protocols.b.facts.declared import policies
from auditor.protocols.b.facts.energy import Energy, Window, trial_energy
from auditor.protocols.b.facts.sequence import trial_outputs
from auditor.protocols.cache import per_view
from auditor.readers import timestamps

if TYPE_CHECKING:
    from auditor.protocols.b.view import Evidence, RunView

MIN_P95_VALUES = 20
"""Fewer latencies than this do not support a p95 (nearest rank: it would be the maximum)."""
MIN_DISTINCT_COPIED = 10
"""A latency sequence with fewer distinct values than this (a coarse timer) can repeat
honestly from one trial to another; one with more cannot."""


@dataclass(frozen=True)
class Trial:
    """One trials.csv row and what the auditor recomputed for it."""

    policy_id: str
    trial_index: int
    row: int
    line: int | None
    status: str
    claims: Mapping[str, Any]
    """The row's typed cells."""
    texts: Mapping[str, str | None]
    """The row's cells as written (for their rounding)."""
    outputs_file: str | None = None
    lines: int | None = None
    p95_ms: float | None = None
    sum_ms: float | None = None
    n_latencies: int = 0
    start: int | None = None
    end: int | None = None
    """The window, epoch nanoseconds."""
    window_from: str | None = None
    """`markers` (the trace's own) or `trials.csv` (the row's started_at/ended_at)."""
    wall_s: float | None = None
    energy: Energy | None = None
    """The energy over the window (ok trials only)."""

    @property
    def unaccounted_s(self) -> float | None:
        """Seconds of the window its per-inference latencies do not account for (the loop
        around the inferences, or idle time padded onto the window)."""
        if self.wall_s is None or self.sum_ms is None:
            return None
        return self.wall_s - self.sum_ms / 1000

    @property
    def key(self) -> tuple[str, int]:
        return (self.policy_id, self.trial_index)

    @property
    def name(self) -> str:
        return f"{self.policy_id} trial {self.trial_index}"


def markers(ev: Evidence | None) -> tuple[int, int] | None:
    """The (window_start, window_end) markers of a trace, epoch nanoseconds, when it has
    both."""
    if ev is None:
        return None
    marks = {
        m.get("event"): timestamps.epoch_ns(m.get("t"))
        for m in ev.meta.get("markers") or []
        if isinstance(m, Mapping)
    }
    start, end = marks.get("window_start"), marks.get("window_end")
    return (start, end) if start is not None and end is not None else None


@per_view
def trials(view: RunView) -> list[Trial]:
    """Every trials.csv row, in file order, with its outputs, window and energy."""
    if view.trials is None:
        return []
    raw = view.trials_raw
    outs = {
        (r["policy_id"], r["trial_index"]): r for r in trial_outputs(view).iter_rows(named=True)
    }
    pols = policies(view)
    out = []
    for i, r in enumerate(view.trials.iter_rows(named=True)):
        texts = dict(raw.row(i, named=True).items()) if raw is not None and i < raw.height else {}
        key = (r["policy_id"], r["trial_index"])
        o = outs.get(key) or {}
        ev = view.power.get(key)
        marks = markers(ev)
        start: int | None
        end: int | None
        window_from: str | None
        if marks is not None:
            start, end, window_from = marks[0], marks[1], "markers"
        else:
            start = timestamps.epoch_ns(r.get("started_at"))
            end = timestamps.epoch_ns(r.get("ended_at"))
            window_from = "trials.csv" if start is not None and end is not None else None
        wall = (end - start) / 1e9 if start is not None and end is not None else None
        energy = None
        if r["status"] == "ok":
            energy = trial_energy(
                view, ev, Window(start, end, pols.get(r["policy_id"]), o.get("lines") or 0)
            )
        out.append(
            Trial(
                policy_id=r["policy_id"],
                trial_index=r["trial_index"],
                row=r["row"],
                line=r.get("line"),
                status=r["status"],
                claims=r,
                texts=texts,
                outputs_file=o.get("file"),
                lines=o.get("lines"),
                p95_ms=o.get("p95_ms"),
                sum_ms=o.get("sum_ms"),
                n_latencies=o.get("n_latencies") or 0,
                start=start,
                end=end,
                window_from=window_from,
                wall_s=wall,
                energy=energy,
            )
        )
    return out


@per_view
def copied_latencies(view: RunView) -> list[list[Trial]]:
    """Groups of ok trials (of one policy or several, in trials.csv order) whose outputs hold
    the very same latencies, in the same order or shuffled (the same values, each as often),
    of at least `MIN_P95_VALUES` values and `MIN_DISTINCT_COPIED` distinct ones: timed once,
    reported as several trials."""
    if view.outputs is None:
        return []
    ok = {t.key: t for t in trials(view) if t.status == "ok"}
    lat = pl.col("latency_ms")
    per_file = (
        view.outputs.filter(pl.col("valid") & lat.is_not_null())
        .group_by("policy_id", "trial_index", maintain_order=True)
        .agg(lat.sort().alias("lats"), lat.n_unique().alias("distinct"))
        .filter(
            (pl.col("distinct") >= MIN_DISTINCT_COPIED)
            & (pl.col("lats").list.len() >= MIN_P95_VALUES)
        )
        .with_columns(pl.col("lats").hash().alias("digest"))
    )
    return _groups(per_file, ok)


def _groups(per_file: pl.DataFrame, ok: dict[tuple[str, int], Trial]) -> list[list[Trial]]:
    """PER_FILE's trials (`policy_id`, `trial_index`, `lats`, `digest`) grouped by equal
    `lats` (equal lists, not only equal hashes), groups of two or more, in trials.csv order."""
    groups: dict[int, list[tuple[list[float], list[Trial]]]] = {}
    for pid, k, lats, digest in per_file.select(
        "policy_id", "trial_index", "lats", "digest"
    ).iter_rows():
        t = ok.get((pid, k))
        if t is None:
            continue
        same = groups.setdefault(digest, [])
        hit = next((g for g in same if g[0] == lats), None)
        if hit is None:
            same.append((lats, [t]))
        else:
            hit[1].append(t)
    order = {t.key: i for i, t in enumerate(ok.values())}
    return [
        sorted(ts, key=lambda t: order[t.key])
        for gs in groups.values()
        for _, ts in gs
        if len(ts) > 1
    ]


MIN_COPIED_READINGS = 20
"""A trace with fewer power readings than this over its window, or fewer distinct values
than `MIN_DISTINCT_COPIED`, can repeat honestly (a steady draw read coarsely)."""


@per_view
def copied_traces(view: RunView) -> list[list[Trial]]:
    """Groups of ok trials whose power traces hold the very same sequence of power readings
    (watts, source by source, in order), whatever their times: one trace re-timed onto
    several trials, at least `MIN_COPIED_READINGS` readings and `MIN_DISTINCT_COPIED`
    distinct values."""
    ok = {t.key: t for t in trials(view) if t.status == "ok"}
    rows = []
    for key in ok:
        ev = view.power.get(key)
        if ev is None or ev.frame is None or ev.frame.is_empty():
            continue
        f = ev.frame.filter(pl.col("watts").is_not_null()).sort("line")
        watts = f["watts"].round(9).to_list()
        if len(watts) >= MIN_COPIED_READINGS and f["watts"].n_unique() >= MIN_DISTINCT_COPIED:
            rows.append((*key, watts))
    if not rows:
        return []
    per_file = pl.DataFrame(
        rows,
        schema={"policy_id": pl.String, "trial_index": pl.Int64, "lats": pl.List(pl.Float64)},
        orient="row",
    )
    return _groups(per_file.with_columns(pl.col("lats").hash().alias("digest")), ok)


def run_span(view: RunView) -> tuple[float | None, float | None]:
    """(the declaration, the last trial's end), epoch seconds."""
    ends = [t.end / 1e9 for t in trials(view) if t.end is not None]
    return timestamps.epoch_s(view.m.get("declared_at")), max(ends) if ends else None
