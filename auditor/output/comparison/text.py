"""`audit compare --format text`: what to buy first, then the rankings and what is not
ranked, for a terminal. Figures are written by `_cells` (through `auditor.present`), as on
the signed page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from auditor.output import Format
from auditor.output.comparison import _cells as cells
from auditor.protocols.names import LETTER, PROTOCOL_B

COPIES_SHOWN = 20
"""Identical copies listed here (all of them are in --format json)."""


def render(cmp: Any, *, color: bool = False) -> str:
    lines = [cmp.headline() + "."]
    lines += ["", "What to buy: per hardware and offer, the best accepted configuration "
              "(A10.2: only accepted ones; protocol B policies apart, by joules per "
              "inference):"]
    if not cmp.choices:
        lines.append("  nothing: no run of the archive accepted a configuration")
    for c in cmp.choices:
        v = cells.choice(c)
        where = f"{v['hardware']}, offer {v['offer_id']}" if c.best.protocol != PROTOCOL_B \
            else f"{v['hardware']} (protocol B)"
        lines.append(f"  {where}: {v['config_id']} ({v['precision']}), {v['figure']}, "
                     f"{v['throughput']}, passes {v['passes']}")
        lines.append(f"    how sure: {v['sure']}; {v['agree']}")
        more = f" and {v['sources_more']:,} more" if v["sources_more"] else ""
        lines.append(f"    rests on: {', '.join(v['sources_shown'])}{more}")
    ranked_a = [cells.row(r) for r in cmp.ranked if r.protocol != PROTOCOL_B]
    ranked_b = [cells.row(r) for r in cmp.ranked if r.protocol == PROTOCOL_B]
    head: tuple[str, ...]  # each table its own columns
    keys: tuple[str, ...]
    if ranked_a or not ranked_b:
        head = ("rank", "GPU", "configuration", "precision", "offer", "runs accepting",
                "warm median", "passes", "throughput", "package", "per accepted corpus")
        keys = ("rank", "hardware", "config_id", "precision", "offer_id", "runs", "median",
                "passes", "throughput", "package", "per_corpus")
        lines += ["", "Ranked (accepted configurations only, A10.2), by cost per accepted "
                  "corpus, then warm median:", *_table(head, [_pick(r, keys)
                                                              for r in ranked_a])]
    if ranked_b:
        head = ("rank", "policy", "runtime and units", "precision", "runs accepting",
                "per inference", "average power", "p95", "median trial", "throughput")
        keys = ("rank", "config_id", "hardware", "precision", "runs", "energy", "power",
                "p95", "median", "throughput")
        lines += ["", "Protocol B policies accepted (ranked apart: by joules per inference, "
                  "then median trial wall time):", *_table(head, [_pick(r, keys)
                                                                  for r in ranked_b])]
    if cmp.not_accepted:
        head = ("status", "protocol", "hardware", "configuration", "precision", "runs",
                "median (not comparable)", "reason", "detail")
        rows = [(v["status"], LETTER.get(r.protocol, "?"), v["hardware"], v["config_id"],
                 v["precision"], v["runs_count"], v["median"], v["reason"], v["detail"])
                for r, v in ((r, cells.row(r)) for r in cmp.not_accepted)]
        lines += ["", "Not accepted (never ranked):", *_table(head, rows)]
    if cmp.conflicts:
        lines += ["", "Copies that share a manifest but not their bytes (one was changed):"]
        for c in cmp.conflicts:
            v = cells.conflict(c)
            lines.append(f"  manifest {v['manifest_sha256'][:16]}...: {v['outcome']}")
            lines += [f"    {m['source']}: {m['verdict']}, {m['seal']}; counted {m['counted']}"
                      for m in v["members"]]
    if cmp.copies:
        lines += ["", "Identical copies (every byte the same), counted once:"]
        lines += [f"  {s} (a copy of {o})" for s, o in cmp.copies[:COPIES_SHOWN]]
        if len(cmp.copies) > COPIES_SHOWN:
            lines.append(f"  and {len(cmp.copies) - COPIES_SHOWN:,} more (--format json "
                         "lists them)")
    if cmp.other_runs:
        lines += ["", "With no configuration to compare:"] + [f"  {s}: {why}"
                                                              for s, why in cmp.other_runs]
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
