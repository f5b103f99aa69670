"""`--format text`: findings grouped by severity, one line each as
`path:location code message: key evidence`, colour only when asked (a terminal), the verdict
last."""

from __future__ import annotations

from auditor.model import AuditResult
from auditor.output.evidence import with_evidence

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
    c = result.counts()
    verdict = _paint(result.verdict, result.verdict, color)
    lines.append(f"{verdict}: {c['error']} error(s), {c['warning']} warning(s), "
                 f"{c['info']} info, {len(result.skipped)} rule(s) skipped, "
                 f"{len(result.rules_run)} run")
    return "\n".join(lines) + "\n"
