"""`--format github`: GitHub Actions workflow commands, one annotation per finding
(`::error file=…,line=…,col=…,title=…::message`), so a check step marks the file and line in
the pull request. Paths are the run dir as given plus the artifact, as the workflow sees
them. The rules left out by `--select`/`--ignore` are one annotation (the waived ones each
with its justification, the others summarised). Values are escaped as the runner expects:
`%`, CR and LF everywhere, and `:` and `,` in properties."""

from __future__ import annotations

import os

from auditor.model import AuditResult
from auditor.output import Format
from auditor.output.wording import not_run_lines, with_evidence

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(result: AuditResult, *, color: bool = False) -> str:
    lines = []
    for f in result.findings:
        props = []
        if f.artifact:
            props.append(f"file={_prop(os.path.join(result.run_dir, f.artifact))}")
            if f.line is not None:
                props.append(f"line={f.line}")
                if f.column is not None:
                    props.append(f"col={f.column}")
        props.append(f"title={_prop(f'{f.code} {f.title}'.strip())}")
        where = f" ({f.location})" if f.location and f.line is None else ""
        lines.append(
            f"::{COMMANDS[f.severity]} {','.join(props)}::"
            f"{_data(f'{with_evidence(f)}{where} [{f.protocol_ref}]')}"
        )
    not_run = not_run_lines(result)  # one annotation for all, not one per rule left out
    if not_run:
        command = "warning" if result.unwaived else "notice"
        lines.append(
            f"::{command} title={_prop('rules not run')}::"
            + _data("\n".join(line.strip() for line in not_run))
        )
    c = result.counts()
    lines.append(
        f"::notice title={_prop('audit verdict')}::"
        + _data(
            f"{result.run_dir}: {result.verdict} ({c['error']} error(s), "
            f"{c['warning']} warning(s), {len(result.skipped)} rule(s) skipped, "
            f"{len(result.rules_not_run)} not run, "
            f"{len(result.unwaived)} unwaived)"
        )
    )
    return "\n".join(lines) + "\n"


FORMAT = Format("github", "GitHub Actions workflow-command annotations", render)
