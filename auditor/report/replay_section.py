"""The report's replay section (`vm["replay"]`, drawn by report.html.j2): what `audit
replay` found, as JSON-safe view-model data like the rest of the report."""

from __future__ import annotations

from auditor.replay import codes
from auditor.replay.result import ReplayResult

SHOWN_IDS = 10
"""Disagreeing IDs listed per file (every one is in replay.json, up to its limit)."""
SHOWN_FILES = 3
"""Files whose disagreeing IDs the report lists (the table gives every file's figures)."""


def agreed_line(files: list) -> str:
    """One line for answers files that all meet their threshold: how many, and the lowest
    agreement among them (the same figure for every one when they all agree fully)."""
    lowest = min(files, key=lambda a: (a.agreement, a.file))
    thresholds = sorted({a.threshold.describe() for a in files})
    every = (
        f"each {lowest.agreed + lowest.ties}/{lowest.compared} ({lowest.agreement:.1%})"
        if all(a.agreed + a.ties == a.compared for a in files)
        and len({a.compared for a in files}) == 1
        else f"the lowest {lowest.agreed + lowest.ties}/{lowest.compared} "
        f"({lowest.agreement:.1%}, {lowest.file})"
    )
    return (
        f"{len(files)} answers file(s) agree with the archived model on the sampled IDs, "
        f"{every}, every one meeting its threshold ({'; '.join(thresholds)})."
    )


def section(result: ReplayResult) -> dict[str, object]:
    """The report's replay section (`vm["replay"]`, drawn by report.html.j2): JSON-safe data
    only, like the rest of the view model. The files that meet their threshold are one line
    (`agreed`); the table (`rows`) holds only the files that do not."""
    rows = []
    met = [a for a in result.files if a.status == "met" and a.agreement is not None]
    for a in result.files:
        if a in met:
            continue
        agreement, interval = a.agreement, a.interval
        rows.append(
            {
                "tone": {"met": "ok", "failed": "bad", "inconclusive": "bad"}.get(
                    a.status, "muted"
                ),
                "cells": {
                    "file": a.file,
                    "config": a.config or "-",
                    "threshold": a.threshold.describe(),
                    "agreement": (
                        "-"
                        if agreement is None
                        else f"{a.agreed + a.ties}/{a.compared} ({agreement:.1%})"
                    ),
                    "interval": "-"
                    if interval is None
                    else f"{interval[0]:.1%} – {interval[1]:.1%}",
                    "status": a.status + (f" ({a.note})" if a.note else ""),
                },
            }
        )
    failing = [a for a in result.files if a.status in ("failed", "inconclusive")]
    verdict = result.verdict
    why = (
        "The answers were produced by the archived model, as far as the sample shows."
        if verdict == "accepted"
        else f"{len(failing)} answers file(s) disagree with the archived model beyond their "
        "threshold: their answers were not all produced by it."
        if failing
        else next(
            (f.message for f in result.findings if f.severity == "error"), "Replay could not run."
        )
    )
    s = result.sample
    own = codes.for_protocol(result.protocol)
    return {
        "verdict": verdict,
        "headline": f"REPLAY {verdict.upper()}",
        "why": why,
        "refs": sorted({r.protocol_ref for r in own}),
        "codes": f"{own[0].code}-{own[-1].code}",
        "sample": None
        if s is None
        else {
            "drawn": len(s.ids),
            "population": s.population,
            "seed": s.seed,
            "seed_source": s.seed_source,
        },
        "model": result.model,
        "tokenizer": result.tokenizer,
        "executed": result.to_json()["executed"],
        "columns": [
            {"key": "file", "label": "Answers file"},
            {"key": "config", "label": "Variant or policy"},
            {"key": "threshold", "label": "Threshold"},
            {"key": "agreement", "label": "Agreement", "align": "r"},
            {"key": "interval", "label": "95% interval", "align": "r"},
            {"key": "status", "label": "Status"},
        ],
        "rows": rows,
        "agreed": agreed_line(met) if met else None,
        "disagreements": [
            {
                "file": a.file,
                "items": [
                    f"{d.id}: answered {', '.join(d.answered)}, replayed {d.replayed}, margin "
                    + ("-" if d.margin is None else f"{d.margin:.4g}")
                    + (" (tie)" if d.tie else "")
                    for d in a.disagreements[:SHOWN_IDS]
                ],
                "more": max(0, len(a.disagreements) - SHOWN_IDS),
            }
            for a in failing[:SHOWN_FILES]
        ],
        "more_files": max(0, len(failing) - SHOWN_FILES),
        "findings": [
            {
                "code": f.code,
                "severity": f.severity,
                "protocol_ref": f.protocol_ref,
                "artifact": f.artifact,
                "message": f.message,
            }
            for f in result.findings
        ],
    }
