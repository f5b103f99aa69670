"""`--format text`: findings grouped by severity, one line each as
`path:location code message: key evidence`, then the rules skipped, the rules left out
(`--select`/`--ignore`) in a few lines (the waived ones each with its justification, the
others summarised), colour only when asked (`auditor.output.style`), the verdict last."""

from __future__ import annotations

from auditor.model import AuditResult
from auditor.output import Format
from auditor.output.style import paint as _paint
from auditor.output.wording import not_run_lines, with_evidence


def render(result: AuditResult, *, color: bool = False) -> str:
    lines: list[str] = []
    for severity in ("error", "warning", "info"):
        group = [f for f in result.findings if f.severity == severity]
        if not group:
            continue
        lines.append(_paint(f"{severity}s ({len(group)}):", severity, color))
        for f in group:
            where = f.artifact or result.run_dir
            if f.location:
                where += f":{f.location}"
            code = _paint(f.code, severity, color)
            lines.append(f"{where} {code} {with_evidence(f)}")
    if result.skipped:
        lines.append(f"skipped ({len(result.skipped)}):")
        lines.extend(f"{s.code} {s.reason}" for s in result.skipped)
    lines.extend(not_run_lines(result))
    used = {
        w.code
        for w in result.waivers
        if any(n.code.startswith(w.code) for n in result.rules_not_run)
    }
    lines.extend(
        f"waiver {w.code} unused (no rule it names was left out): {w.justification}"
        for w in result.waivers
        if w.code not in used
    )
    c = result.counts()
    verdict = _paint(result.verdict, result.verdict, color)
    not_run = (
        f", {len(result.rules_not_run)} not run ({len(result.unwaived)} error rule(s) unwaived)"
        if result.rules_not_run
        else ""
    )
    lines.append(
        f"{verdict}: {c['error']} error(s), {c['warning']} warning(s), "
        f"{c['info']} info, {len(result.skipped)} rule(s) skipped, "
        f"{len(result.rules_run)} run{not_run}"
    )
    return "\n".join(lines) + "\n"


FORMAT = Format("text", "findings for a terminal, one line each, verdict last", render)
