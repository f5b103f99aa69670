"""`audit replay --format text`: what was replayed (model, tokenizer, sample and seed), one
line per answers file (agreement, its 95% interval, the floor and whether it is met), the
disagreeing IDs of the files that fail with their margins, the findings in `audit check`'s
line format, and the replay verdict last. `--format json` is `ReplayResult.to_json`."""

from __future__ import annotations

from auditor.output import Format
from auditor.output.style import paint
from auditor.output.wording import with_evidence
from auditor.replay.compare import Agreement
from auditor.replay.result import ReplayResult

SHOWN_IDS = 10
"""Disagreeing IDs printed per file (every one is in the JSON result, up to its limit)."""
SHOWN_FILES = 3
"""Files whose disagreeing IDs the report lists (the table gives every file's figures)."""


_TONE = {"met": "ok", "failed": "failed", "inconclusive": "warning"}


def agreement_line(a: Agreement, color: bool = False) -> str:
    """`<file>: <k>/<n> agree (<p>%, 95% CI <lo>-<hi>%); <threshold>: <status>`."""
    status = paint(a.status, _TONE.get(a.status, "muted"), color)
    if not a.compared:
        return f"{a.file}: no sampled ID answered ({a.missing} missing): {status}"
    agreement, interval = a.agreement, a.interval
    assert agreement is not None and interval is not None
    ties = f", {a.ties} tie(s)" if a.ties else ""
    missing = f", {a.missing} not answered" if a.missing else ""
    note = f" [{a.note}]" if a.note else ""
    return (
        f"{a.file}: {a.agreed + a.ties}/{a.compared} agree{ties}{missing} "
        f"({agreement:.1%}, 95% CI {interval[0]:.1%}-{interval[1]:.1%}); "
        f"{a.threshold.describe()}: {status}{note}"
    )


def render(result: ReplayResult, *, color: bool = False) -> str:
    lines = [
        f"replay of {result.run_dir} (protocol {result.protocol}, experiment "
        f"{result.experiment_id or '?'})"
    ]
    if result.model and result.tokenizer:
        m, t = result.model, result.tokenizer
        lines.append(
            f"model: {m['file']} sha256 {m['sha256'][:16]}..., opset {m['opset']}, "
            f"{m['runtime']}, {m['threads']} thread(s)"
        )
        lines.append(
            f"tokenizer: {t['file']} ({t['kind']}, from its data) sha256 {t['sha256'][:16]}..."
        )
    if result.sample:
        s = result.sample
        lines.append(
            f"sample: {len(s.ids)} of {s.population} input IDs, seed {s.seed} ({s.seed_source})"
        )
    if result.files:
        lines.append(f"answers files ({len(result.files)}):")
        for a in result.files:
            lines.append("  " + agreement_line(a, color))
            if a.status in ("failed", "inconclusive"):
                for d in a.disagreements[:SHOWN_IDS]:
                    margin = "-" if d.margin is None else f"{d.margin:.4g}"
                    lines.append(
                        f"    {d.id}: answered {', '.join(d.answered)}, replayed "
                        f"{d.replayed}, margin {margin}" + (" (tie)" if d.tie else "")
                    )
                if len(a.disagreements) > SHOWN_IDS:
                    lines.append(f"    and {len(a.disagreements) - SHOWN_IDS} more")
    for severity in ("error", "warning", "info"):
        group = [f for f in result.findings if f.severity == severity]
        if group:
            lines.append(paint(f"{severity}s ({len(group)}):", severity, color))
            lines.extend(
                f"{f.artifact or result.run_dir}"
                f"{':' + f.location if f.location else ''} {f.code} {with_evidence(f)}"
                for f in group
            )
    c = result.counts()
    verdict = paint(f"replay {result.verdict}", result.verdict, color)
    lines.append(
        f"{verdict}: {c['error']} error(s), {c['warning']} warning(s); "
        f"{len(result.files)} answers file(s) compared (this is not the run's "
        "`audit check` verdict)"
    )
    return "\n".join(lines) + "\n"


FORMAT = Format("text", "for a person", render)
