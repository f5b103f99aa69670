"""Memory as the run's evidence shows it (A7): out-of-memory events per pass, the PyTorch
allocator figures of the CSV per variant and phase, and the figures of other named sources
(A7.5) per process: a process's peak RSS covers every pass it ran, so it is never a
variant's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import polars as pl

from auditor.protocols.a.facts.gpus import is_gpu_device
from auditor.protocols.a.facts.timing import pass_table
from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView

PassKey = tuple[str, str, int]

ALLOCATOR_CELLS = (
    "baseline_allocated_bytes",
    "baseline_reserved_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
)
"""The CSV's allocator figures (source torch.cuda)."""


def _num_ooms(stats: Any) -> int:
    n = stats.get("num_ooms") if isinstance(stats, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) else 0


@per_view
def pass_ooms(view: RunView) -> Mapping[PassKey, int]:
    """Per pass with a memory trace, the out-of-memory events PyTorch's allocator counted
    during it: `memory_stats_after.num_ooms` minus `memory_stats_before.num_ooms` (a
    counter of the process; a missing one counts 0). Only passes with at least one."""
    out = {}
    for key, doc in view.memory_traces.items():
        n = _num_ooms(doc.get("memory_stats_after")) - _num_ooms(doc.get("memory_stats_before"))
        if n > 0:
            out[key] = n
    return MappingProxyType(out)


@per_view
def allocator_figures(view: RunView) -> pl.DataFrame | None:
    """Per variant and phase of the CSV, in that order: the largest of each
    `ALLOCATOR_CELLS` over its rows, `recorded` (one of them has a value) and `on_gpu`
    (its first row's device names a GPU, `gpus.GPU_DEVICE`: where the allocator is
    measured). None without a CSV."""
    if view.results is None:
        return None
    return (
        view.results.group_by(["variant_id", "phase"])
        .agg(
            *[pl.col(c).cast(pl.Int64).max().alias(c) for c in ALLOCATOR_CELLS],
            pl.col("device").first().alias("device"),
        )
        .sort(["variant_id", "phase"])
        .with_columns(
            pl.any_horizontal([pl.col(c).is_not_null() for c in ALLOCATOR_CELLS]).alias("recorded"),
            is_gpu_device().alias("on_gpu"),
        )
        .drop("device")
    )


@dataclass(frozen=True)
class FigureGroup:
    """One row of a figure from another source: one process and the passes it ran, or the
    processes that each ran one pass of the same phase (fresh cold processes), merged."""

    pid: int | None
    """The process (the timeline's pid); None when unknown or when several are merged."""
    processes: int
    """How many processes the row merges (1: one process)."""
    passes: tuple[PassKey, ...]
    """Sorted."""
    values: tuple[float, ...]

    @property
    def merged(self) -> bool:
        return self.processes > 1


@dataclass(frozen=True)
class OtherFigure:
    """A memory figure from outside the allocator (A7.5), as its traces name it."""

    name: str
    source: str
    unit: str
    groups: tuple[FigureGroup, ...]
    """Cold passes first, then by passes."""

    @property
    def in_bytes(self) -> bool:
        return self.unit.lower() in ("bytes", "byte", "b")


@per_view
def other_figures(view: RunView) -> tuple[OtherFigure, ...]:
    """Figures from outside the allocator, per figure (name, source, unit: sorted) and
    process (the timeline's pid of each CSV row's pass; without one each pass is its own
    process, so what may differ is never merged)."""
    table = pass_table(view)
    pid_of = (
        {}
        if table is None
        else {
            (v, ph, run): pid
            for v, ph, run, pid in table.select(
                "variant_id", "phase", "run_index", "pid"
            ).iter_rows()
        }
    )
    figures: dict[tuple[str, str, str], dict[Any, dict[str, list]]] = {}
    for key, trace in (view.memory_traces or {}).items():
        if not isinstance(trace, Mapping) or not isinstance(key, tuple) or len(key) < 3:
            continue
        pass_key = (str(key[0]), str(key[1]), int(key[2]))
        for src in trace.get("other_sources") or []:
            if not isinstance(src, Mapping) or not isinstance(src.get("value"), (int, float)):
                continue
            pid = pid_of.get(pass_key)
            proc = pid if pid is not None else pass_key
            procs = figures.setdefault(
                (str(src.get("name")), str(src.get("source")), str(src.get("unit"))), {}
            )
            g = procs.setdefault(proc, {"values": [], "passes": []})
            g["values"].append(src["value"])
            g["passes"].append(pass_key)
    out = []
    for (name, source, unit), procs in sorted(figures.items()):
        groups: list[FigureGroup] = []
        singles: dict[str, list[tuple[Any, dict[str, list]]]] = {}
        for proc, g in procs.items():
            if len(g["passes"]) == 1:
                singles.setdefault(g["passes"][0][1], []).append((proc, g))
            else:
                groups.append(
                    FigureGroup(
                        proc if isinstance(proc, int) else None,
                        1,
                        tuple(sorted(g["passes"])),
                        tuple(g["values"]),
                    )
                )
        for group in singles.values():
            first = group[0][0]
            groups.append(
                FigureGroup(
                    None if len(group) > 1 or not isinstance(first, int) else first,
                    len(group),
                    tuple(sorted(p for _, g in group for p in g["passes"])),
                    tuple(v for _, g in group for v in g["values"]),
                )
            )
        groups.sort(key=lambda r: (r.passes[0][1] != "cold", r.passes))
        out.append(OtherFigure(name, source, unit, tuple(groups)))
    return tuple(out)
