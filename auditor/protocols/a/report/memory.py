"""The report's memory section of protocol A: the allocator figures (from the CSV, source
torch.cuda) where recorded, the passes where they are not in one sentence, and the figures
from other named sources (A7.5) per process (`facts.memory`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from auditor.present import natural_key
from auditor.protocols.a.facts.memory import (
    ALLOCATOR_CELLS,
    OtherFigure,
    allocator_figures,
    other_figures,
)
from auditor.protocols.a.report.text import fmt_bytes, passes_text

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView


def memory_section(view: RunView) -> dict[str, Any]:
    """Per variant its allocator figures per phase, what is not recorded, and the other
    sources' figures."""
    figures = allocator_figures(view)
    if figures is None:
        return {"variants": [], "not_recorded": None, "other": []}
    by_variant: dict[str, dict[str, Any]] = {}
    missing: list[tuple[str, str, bool]] = []
    for r in figures.iter_rows(named=True):
        if not r["recorded"]:
            missing.append((r["variant_id"], r["phase"], r["on_gpu"]))
            continue
        v = by_variant.setdefault(
            r["variant_id"], {"variant_id": r["variant_id"], "rows": [], "series": []}
        )
        v["rows"].append(
            {
                "phase": r["phase"],
                "source": "torch.cuda allocator (resultats-bruts.csv, max over passes)",
                **{c: r[c] for c in ALLOCATOR_CELLS},
                **{c + "_text": fmt_bytes(r[c]) for c in ALLOCATOR_CELLS},
            }
        )
        v["series"].append(
            {
                "label": f"{r['phase']} peak reserved (torch.cuda)",
                "peak_bytes": r["peak_reserved_bytes"],
            }
        )
    not_recorded = None
    if missing:
        on_cpu = all(not gpu for _, _, gpu in missing)
        which = "every pass" if not by_variant else ", ".join(f"{v} {ph}" for v, ph, _ in missing)
        not_recorded = f"PyTorch allocator memory: not recorded for {which}" + (
            " (the passes ran on the CPU, where the allocator is not measured)." if on_cpu else "."
        )
    return {
        "variants": [by_variant[k] for k in sorted(by_variant, key=natural_key)],
        "not_recorded": not_recorded,
        "other": [_other(f) for f in other_figures(view)],
    }


def _other(f: OtherFigure) -> dict[str, Any]:
    """One figure from another source: per process its largest value and the passes it ran;
    for processes that each ran one pass, the range over them."""

    def show(v: float, short: bool = False) -> str:
        if not f.in_bytes:
            return f"{v:,} {f.unit}"
        return f"{v / 2**20:,.1f} MiB" if short else fmt_bytes(int(v))

    return {
        "name": f.name,
        "source": f.source,
        "unit": f.unit,
        "rows": [
            {
                "process": (
                    f"{g.processes} processes, one per pass"
                    if g.merged
                    else f"pid {g.pid}"
                    if g.pid is not None
                    else "—"
                ),
                "passes": [" ".join(map(str, k)) for k in g.passes],
                "passes_text": passes_text(list(g.passes)),
                "max_value": max(g.values),
                "value_text": (
                    f"{show(min(g.values), True)} to {show(max(g.values), True)}"
                    if g.merged and min(g.values) != max(g.values)
                    else show(max(g.values))
                ),
            }
            for g in f.groups
        ],
    }
