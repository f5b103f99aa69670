"""`audit replay --format text`: what was replayed (model, tokenizer, sample and seed), one
line per answers file (agreement, its 95% interval, the floor and whether it is met), the
disagreeing IDs of the files that fail with their margins, the findings in `audit check`'s
line format, and the replay verdict last. `--format json` is `ReplayResult.to_json`."""

from __future__ import annotations

from auditor.output.evidence import with_evidence
from auditor.replay import codes
from auditor.replay.compare import Agreement
from auditor.replay.result import ReplayResult

SHOWN_IDS = 10
"""Disagreeing IDs printed per file (every one is in the JSON result, up to its limit)."""
SHOWN_FILES = 3
"""Files whose disagreeing IDs the report lists (the table gives every file's figures)."""


def agreement_line(a: Agreement) -> str:
    """`<file>: <k>/<n> agree (<p>%, 95% CI <lo>-<hi>%); <threshold>: <status>`."""
    if not a.compared:
        return f"{a.file}: no sampled ID answered ({a.missing} missing): {a.status}"
    agreement, interval = a.agreement, a.interval
    assert agreement is not None and interval is not None
    ties = f", {a.ties} tie(s)" if a.ties else ""
    missing = f", {a.missing} not answered" if a.missing else ""
    note = f" [{a.note}]" if a.note else ""
    return (f"{a.file}: {a.agreed + a.ties}/{a.compared} agree{ties}{missing} "
            f"({agreement:.1%}, 95% CI {interval[0]:.1%}-{interval[1]:.1%}); "
            f"{a.threshold.describe()}: {a.status}{note}")


def render(result: ReplayResult) -> str:
    lines = [f"replay of {result.run_dir} (protocol {result.protocol}, experiment "
             f"{result.experiment_id or '?'})"]
    if result.model and result.tokenizer:
        m, t = result.model, result.tokenizer
        lines.append(f"model: {m['file']} sha256 {m['sha256'][:16]}..., opset {m['opset']}, "
                     f"{m['runtime']}, {m['threads']} thread(s)")
        lines.append(f"tokenizer: {t['file']} ({t['kind']}, from its data) sha256 "
                     f"{t['sha256'][:16]}...")
    if result.sample:
        s = result.sample
        lines.append(f"sample: {len(s.ids)} of {s.population} input IDs, seed {s.seed} "
                     f"({s.seed_source})")
    if result.files:
        lines.append(f"answers files ({len(result.files)}):")
        for a in result.files:
            lines.append("  " + agreement_line(a))
            if a.status in ("failed", "inconclusive"):
                for d in a.disagreements[:SHOWN_IDS]:
                    margin = "-" if d.margin is None else f"{d.margin:.4g}"
                    lines.append(f"    {d.id}: answered {', '.join(d.answered)}, replayed "
                                 f"{d.replayed}, margin {margin}" + (" (tie)" if d.tie else ""))
                if len(a.disagreements) > SHOWN_IDS:
                    lines.append(f"    and {len(a.disagreements) - SHOWN_IDS} more")
    for severity in ("error", "warning", "info"):
        group = [f for f in result.findings if f.severity == severity]
        if group:
            lines.append(f"{severity}s ({len(group)}):")
            lines.extend(f"{f.artifact or result.run_dir}"
                         f"{':' + f.location if f.location else ''} {f.code} {with_evidence(f)}"
                         for f in group)
    c = result.counts()
    lines.append(f"replay {result.verdict}: {c['error']} error(s), {c['warning']} warning(s); "
                 f"{len(result.files)} answers file(s) compared (this is not the run's "
                 "`audit check` verdict)")
    return "\n".join(lines) + "\n"


def section(result: ReplayResult) -> dict[str, object]:
    """The report's replay section (`vm["replay"]`, drawn by report.html.j2): JSON-safe data
    only, like the rest of the view model."""
    rows = []
    for a in result.files:
        agreement, interval = a.agreement, a.interval
        rows.append({"tone": {"met": "ok", "failed": "bad", "inconclusive": "bad"}.get(
            a.status, "muted"), "cells": {
            "file": a.file, "config": a.config or "-", "threshold": a.threshold.describe(),
            "agreement": ("-" if agreement is None else
                          f"{a.agreed + a.ties}/{a.compared} ({agreement:.1%})"),
            "interval": "-" if interval is None else f"{interval[0]:.1%} – {interval[1]:.1%}",
            "status": a.status + (f" ({a.note})" if a.note else "")}})
    failing = [a for a in result.files if a.status in ("failed", "inconclusive")]
    verdict = result.verdict
    why = ("Every judged answers file agrees with the archived model on the sampled IDs."
           if verdict == "accepted" else
           f"{len(failing)} answers file(s) disagree with the archived model beyond their "
           "threshold: their answers were not all produced by it." if failing else
           next((f.message for f in result.findings if f.severity == "error"),
                "Replay could not run."))
    s = result.sample
    own = codes.for_protocol(result.protocol)
    return {
        "verdict": verdict, "headline": f"REPLAY {verdict.upper()}", "why": why,
        "refs": sorted({r.protocol_ref for r in own}),
        "codes": f"{own[0].code}-{own[-1].code}",
        "sample": None if s is None else {"drawn": len(s.ids), "population": s.population,
                                          "seed": s.seed, "seed_source": s.seed_source},
        "model": result.model, "tokenizer": result.tokenizer,
        "executed": result.to_json()["executed"],
        "columns": [{"key": "file", "label": "Answers file"},
                    {"key": "config", "label": "Variant or policy"},
                    {"key": "threshold", "label": "Threshold"},
                    {"key": "agreement", "label": "Agreement", "align": "r"},
                    {"key": "interval", "label": "95% interval", "align": "r"},
                    {"key": "status", "label": "Status"}],
        "rows": rows,
        "disagreements": [{"file": a.file, "items": [
            f"{d.id}: answered {', '.join(d.answered)}, replayed {d.replayed}, margin "
            + ("-" if d.margin is None else f"{d.margin:.4g}") + (" (tie)" if d.tie else "")
            for d in a.disagreements[:SHOWN_IDS]],
            "more": max(0, len(a.disagreements) - SHOWN_IDS)} for a in failing[:SHOWN_FILES]],
        "more_files": max(0, len(failing) - SHOWN_FILES),
        "findings": [{"code": f.code, "severity": f.severity, "protocol_ref": f.protocol_ref,
                      "artifact": f.artifact, "message": f.message} for f in result.findings],
    }
