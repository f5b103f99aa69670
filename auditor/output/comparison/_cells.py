"""The comparison's figures as the words and numbers a reader sees, written once for the
text output and the signed page (through `auditor.present`, as the run report writes
them): a row's cells, a choice's cells, a conflict's lines."""

from __future__ import annotations

from typing import Any

from auditor.present import DASH, money, number, rate, seconds, seconds_range

ALIGN = {
    **dict.fromkeys(
        (
            "rank",
            "runs",
            "median",
            "median_passes",
            "passes",
            "throughput",
            "package",
            "per_corpus",
            "energy",
            "power",
            "p95",
        ),
        "r",
    ),
    "config_id": "mono",
    "offer_id": "mono",
}
"""The page's class of a cell of a ranked table (numbers right-aligned), by its key."""
SHOWN_SOURCES = 5
"""Runs named on a line of what to buy (all are in the JSON and the CSV)."""


def part(protocol: str) -> Any:
    """PROTOCOL's `ComparisonPart` (its unit, ranking figure, table)."""
    from auditor.archive.ranking import part as comparison_part

    return comparison_part(protocol)


def unit(protocol: str) -> str:
    return part(protocol).unit


def runs_cell(r: Any) -> str:
    """`3 of 3 runs accept it; their passes overlap`."""
    head = (
        f"{r.accepted_runs:,} of {r.all_runs:,} run{'s' if r.all_runs != 1 else ''} "
        f"accept{'s' if r.all_runs == 1 else ''} it"
    )
    if r.runs_agree is None:
        return head if r.all_runs != 1 else "1 run (nothing to agree with)"
    if r.runs_agree:
        return f"{head}; their passes overlap: the runs agree"
    if r.accepted_runs < r.all_runs:
        return f"{head}: the runs do not agree"
    return f"{head}, but their passes do not overlap: the runs do not agree"


def row(r: Any) -> dict[str, Any]:
    """The cells of one comparison row (strings), with the row's rank and status."""
    per = (
        money(r.cost_per_accepted_corpus_minor, r.currency)
        if r.cost_per_accepted_corpus_minor is not None
        else r.reason or DASH
    )
    return {
        "rank": str(r.rank) if r.rank is not None else DASH,
        "status": r.status,
        "protocol": r.protocol,
        "protocol_letter": part(r.protocol).letter,
        "workload": r.workload_label,
        "hardware": r.hardware,
        "config_id": r.config_id,
        "precision": r.precision or DASH,
        "offer_id": r.offer_id or DASH,
        "runs": f"{r.accepted_runs:,} of {r.all_runs:,}",
        "runs_count": f"{r.runs:,}",
        "agree": runs_cell(r),
        "median": seconds(r.median_s),
        "passes": seconds_range(r.pass_min_s, r.pass_max_s),
        "median_passes": (f"{seconds(r.median_s)} ({seconds_range(r.pass_min_s, r.pass_max_s)})"),
        "throughput": rate(r.throughput_per_s, unit(r.protocol)),
        "package": (
            money(r.package_total_minor, r.currency) if r.package_total_minor is not None else DASH
        ),
        "per_corpus": per,
        "per_corpus_missing": r.cost_per_accepted_corpus_minor is None,
        "energy": (
            number(r.joules_per_inference, "J")
            if r.joules_per_inference is not None
            else "not measured"
        ),
        "per_inference": f"{number(r.joules_per_inference, 'J')} per inference",
        "power": number(r.average_power_w, "W"),
        "p95": number(r.p95_ms, "ms"),
        "reason": r.reason or DASH,
        "detail": r.detail or DASH,
        "sources": list(r.sources),
    }


def sure(c: Any) -> str:
    """How sure the choice is against its runner-up, in words."""
    up = c.runner_up
    if up is None:
        return "the only accepted configuration here"
    p = part(c.best.protocol)
    if not p.passes_told_apart:
        return f"next: {up.config_id} at {row(up)[p.figure_cell]} ({p.not_told_apart})"
    span = seconds_range(up.pass_min_s, up.pass_max_s)
    if c.told_apart is None:
        return f"next: {up.config_id} ({span}); passes not recorded, not told apart"
    if c.told_apart:
        return f"passes apart from the next, {up.config_id} ({span})"
    return f"passes overlap the next, {up.config_id} ({span}): not told apart"


def choice(c: Any) -> dict[str, Any]:
    """The cells of one line of what to buy."""
    b = c.best
    shown = list(b.sources[:SHOWN_SOURCES])
    more = len(b.sources) - len(shown)
    return {
        **row(b),
        "sure": sure(c),
        "told_apart": c.told_apart,
        "runs_agree": b.runs_agree,
        "sources_shown": shown,
        "sources_more": more,
        "figure": row(b)[part(b.protocol).figure_cell],
        "figure_missing": getattr(b, part(b.protocol).rank_figure) is None,
        "costed": part(b.protocol).costed,
    }


def workload(w: Any) -> dict[str, Any]:
    """A workload's label, protocol letter and description."""
    p = part(w.protocol)
    return {
        "label": w.label,
        "protocol_letter": p.letter,
        "figure_heading": p.figure_heading,
        "ranked_by": p.ranked_title,
        "hardware_words": p.hardware_words,
        "description": w.describe(),
        "key": w.key or DASH,
        "runs": f"{w.runs:,} run{'s' if w.runs != 1 else ''}",
    }


def ranked_tables(cmp: Any) -> list[dict[str, Any]]:
    """Each protocol's ranked table (a trial's wall time is not a warm pass's): its title,
    headings and rows of cells, in the order of the protocols' first ranked rows."""
    tables: dict[str, list[Any]] = {}
    for r in cmp.ranked:
        tables.setdefault(r.protocol, []).append(r)
    out = []
    for protocol, rows in tables.items():
        p = part(protocol)
        out.append(
            {
                "protocol": protocol,
                "letter": p.letter,
                "title": p.ranked_title,
                "head": [h for h, _ in p.ranked_columns],
                "rows": [[row(r)[k] for _, k in p.ranked_columns] for r in rows],
                "align": [ALIGN.get(k, "wrap") for _, k in p.ranked_columns],
                "costed": p.costed,
                "hardware_words": p.hardware_words,
            }
        )
    return out


def conflict(c: Any) -> dict[str, Any]:
    """A conflict as lines: each member, whether its files match the manifest."""

    def says(m: Any) -> str:
        return {
            True: "matches its manifest",
            False: "does not match its manifest",
            None: "no readable manifest",
        }[m.matches_manifest]

    run = next((m for m in c.members if m.source == c.genuine), None)

    def counted(m: Any) -> str:
        if m is run:
            return "yes: the run"
        if run is not None and m.content_sha256 and m.content_sha256 == run.content_sha256:
            return "once: an identical copy of the run"
        return "no: set aside"

    return {
        "manifest_sha256": c.manifest_sha256,
        "genuine": c.genuine,
        "outcome": (
            f"counted: {c.genuine}"
            if c.genuine
            else "none counted: no copy (or more than one) matches the manifest"
        ),
        "members": [
            {"source": m.source, "verdict": m.verdict, "seal": says(m), "counted": counted(m)}
            for m in c.members
        ],
    }
