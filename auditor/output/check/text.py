"""`--format text`: findings grouped by severity, one line each as
`path:location code message: key evidence`, then the rules skipped, the rules left out
(`--select`/`--ignore`) with their waivers, colour only when asked (a terminal), the verdict
last."""

from __future__ import annotations

from auditor.model import AuditResult
from auditor.output import Format
from auditor.output.wording import with_evidence

_COLOURS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m",
            "accepted": "\x1b[32m", "rejected": "\x1b[31m", "incomplete": "\x1b[33m"}
_RESET = "\x1b[0m"


def _paint(text: str, key: str, color: bool) -> str:
    return f"{_COLOURS[key]}{text}{_RESET}" if color else text


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
    if result.rules_not_run:
        lines.append(f"not run (--select/--ignore) ({len(result.rules_not_run)}):")
        lines.extend(n.describe() for n in result.rules_not_run)
    used = {w.code for w in result.waivers if any(n.code.startswith(w.code)
                                                  for n in result.rules_not_run)}
    lines.extend(f"waiver {w.code} unused (no rule it names was left out): {w.justification}"
                 for w in result.waivers if w.code not in used)
    c = result.counts()
    verdict = _paint(result.verdict, result.verdict, color)
    not_run = (f", {len(result.rules_not_run)} not run ({len(result.unwaived)} error rule(s) "
               "unwaived)" if result.rules_not_run else "")
    lines.append(f"{verdict}: {c['error']} error(s), {c['warning']} warning(s), "
                 f"{c['info']} info, {len(result.skipped)} rule(s) skipped, "
                 f"{len(result.rules_run)} run{not_run}")
    return "\n".join(lines) + "\n"


FORMAT = Format("text", "findings for a terminal, one line each, verdict last", render)
