"""`audit compare --format text`: what to buy first, then the rankings and what is not
ranked, for a terminal. Figures are written by `_cells` (through `auditor.present`), as on
the signed page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from auditor.output import Format
from auditor.output.comparison import _cells as cells

COPIES_SHOWN = 20
"""Identical copies listed here (all of them are in --format json)."""


def render(cmp: Any, *, color: bool = False) -> str:
    lines = [cmp.headline() + "."]
    lines += [
        "",
        "What to buy: per workload (runs of the same corpus, model, tokenizer, "
        "config, precision and context), per hardware and offer, the best accepted "
        "configuration (A10.2: only accepted ones; each protocol by its own figure):",
    ]
    if not cmp.choices:
        lines.append("  nothing: no run compared accepted a configuration")
    works = {w.label: cells.workload(w) for w in cmp.workloads}
    shown = None
    for c in cmp.choices:
        v = cells.choice(c)
        if v["workload"] != shown:
            shown = v["workload"]
            w = works[shown]
            lines.append(
                f"  {w['label']} (protocol {w['protocol_letter']}, {w['runs']}): {w['description']}"
            )
        where = (
            f"{v['hardware']}, offer {v['offer_id']}"
            if v["costed"]
            else f"{v['hardware']} (protocol {v['protocol_letter']})"
        )
        lines.append(
            f"    {where}: {v['config_id']} ({v['precision']}), {v['figure']}, "
            f"{v['throughput']}, passes {v['passes']}"
        )
        lines.append(f"      how sure: {v['sure']}; {v['agree']}")
        more = f" and {v['sources_more']:,} more" if v["sources_more"] else ""
        lines.append(f"      rests on: {', '.join(v['sources_shown'])}{more}")
    if cmp.workloads:
        lines += [
            "",
            "Workloads (only runs of the same workload share a row; ranks start at 1 in each):",
        ]
        lines += [
            f"  {w['label']} (protocol {w['protocol_letter']}, {w['runs']}): "
            f"{w['description']}; key {w['key']}"
            for w in works.values()
        ]
    tables = cells.ranked_tables(cmp)
    if not tables:
        lines += ["", "Ranked (accepted configurations only, A10.2):", "  (none)"]
    for t in tables:
        lines += [
            "",
            f"{t['title']}:",
            *_table(tuple(t["head"]), [tuple(map(str, r)) for r in t["rows"]]),
        ]
    if cmp.not_accepted:
        head = (
            "status",
            "protocol",
            "workload",
            "hardware",
            "configuration",
            "precision",
            "runs",
            "median (not comparable)",
            "reason",
            "detail",
        )
        rows = [
            (
                v["status"],
                v["protocol_letter"],
                v["workload"],
                v["hardware"],
                v["config_id"],
                v["precision"],
                v["runs_count"],
                v["median"],
                v["reason"],
                v["detail"],
            )
            for v in map(cells.row, cmp.not_accepted)
        ]
        lines += ["", "Not accepted (never ranked):", *_table(head, rows)]
    if cmp.conflicts:
        lines += ["", "Copies that share a manifest but not their bytes (one was changed):"]
        for c in cmp.conflicts:
            v = cells.conflict(c)
            lines.append(f"  manifest {v['manifest_sha256'][:16]}...: {v['outcome']}")
            lines += [
                f"    {m['source']}: {m['verdict']}, {m['seal']}; counted {m['counted']}"
                for m in v["members"]
            ]
    if cmp.copies:
        lines += ["", "Identical copies (every byte the same), counted once:"]
        lines += [f"  {s} (a copy of {o})" for s, o in cmp.copies[:COPIES_SHOWN]]
        if len(cmp.copies) > COPIES_SHOWN:
            lines.append(
                f"  and {len(cmp.copies) - COPIES_SHOWN:,} more (--format json lists them)"
            )
    if cmp.other_runs:
        lines += ["", "With no configuration to compare:"] + [
            f"  {s}: {why}" for s, why in cmp.other_runs
        ]
    return "\n".join(lines) + "\n"


def _pick(v: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(str(v[k]) for k in keys)


def _table(head: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    if not rows:
        return ["  (none)"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    fmt = "  " + "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*head).rstrip(), *(fmt.format(*r).rstrip() for r in rows)]


FORMAT = Format("text", "what to buy, then the comparison tables, for a terminal", render)
