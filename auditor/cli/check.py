"""`audit check`, `audit rules` and `audit explain`: a run's findings, and what each rule checks."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import click

from auditor import output
from auditor.cli.app import cli
from auditor.cli.options import (
    _REF,
    _SECTION,
    SCHEMA_VERSION,
    _codes,
    _color_option,
    _emit,
    _format_option,
    _formats_option,
    _json,
    _output_option,
)
from auditor.errors import AuditorError
from auditor.output import style


@cli.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@_formats_option(output.CHECK, "Output format: ")
@_output_option
@_color_option
@click.option("--select", help="Comma-separated rule codes (or prefixes) to run; default all.")
@click.option("--ignore", help="Comma-separated rule codes (or prefixes) to leave out.")
@click.option(
    "--waivers",
    "waivers_file",
    type=click.Path(path_type=Path),
    help="JSON or TOML file mapping rule codes left out by --select/--ignore to a "
    "written justification (schemas/waivers.schema.json). An error rule left "
    "out without one makes the verdict incomplete.",
)
def check(
    run_dir: Path,
    fmt: str,
    output_file: Path | None,
    color_choice: str,
    select: str | None,
    ignore: str | None,
    waivers_file: Path | None,
) -> None:
    """Re-validate RUN_DIR against the schemas and every rule of its protocol.

    Exit 0 when no error finding (and no error rule left out unwaived), 1 otherwise, 2 for
    bad usage."""
    from auditor.engine import run_check
    from auditor.waivers import load_waivers

    waivers = load_waivers(waivers_file) if waivers_file is not None else ()
    result = run_check(run_dir, select=_codes(select), ignore=_codes(ignore), waivers=waivers)
    color = fmt == "text" and output_file is None and style.use_color(color_choice)
    _emit(output.render(output.CHECK, fmt, result, color=color), output_file, color=color)
    sys.exit(result.exit_code)


@cli.command("rules")
@_format_option(
    "text",
    "json",
    help_text="text: one line per rule; json: every rule with its "
    "documentation and fix (schemas/audit-rules.schema.json).",
)
@_output_option
def rules_cmd(fmt: str, output_file: Path | None) -> None:
    """List every rule: code, severity, protocol rule, title; then the codes of `audit
    replay`'s findings (RA.., RB..), which `audit check` never raises."""
    from auditor.protocols import all_protocols
    from auditor.replay import codes

    replay_rules = [
        (p, r)
        for p, prefix in codes.PROTOCOL_PREFIX.items()
        for r in codes.REPLAY_RULES
        if r.code.startswith(prefix)
    ]
    if fmt == "json":
        _emit(
            _json(
                {
                    "schema_version": SCHEMA_VERSION,
                    "rules": [
                        {
                            "code": r.code,
                            "title": r.title,
                            "protocol": name,
                            "command": command,
                            "protocol_ref": r.protocol_ref,
                            "severity": r.severity,
                            "requires": list(r.requires),
                            **r.info().parts(),
                            "fix": r.fix,
                        }
                        for command, pairs in (
                            ("check", [(p.name, r) for p in all_protocols() for r in p.rules]),
                            ("replay", replay_rules),
                        )
                        for name, r in pairs
                    ],
                }
            )
            + "\n",
            output_file,
        )
        return
    from auditor.protocols import all_rules

    lines = [f"{r.code}  {r.severity:<7}  {r.protocol_ref:<6}  {r.title}" for r in all_rules()]
    lines.append("raised by `audit replay` only:")
    lines.extend(
        f"{r.code:<5}  {r.severity:<7}  {r.protocol_ref:<6}  {r.title}" for _, r in replay_rules
    )
    _emit("\n".join(lines) + "\n", output_file)


def _rule_line(r: Any) -> str:
    from auditor.replay import codes

    by = " (audit replay)" if codes.get(r.code) else ""
    return f"  {r.code:<5}  {r.severity:<7}  {r.protocol_ref:<6}  {r.title}{by}"


def _wrapped(text: str, indent: str = "  ") -> str:
    return textwrap.fill(text, 88, initial_indent=indent, subsequent_indent=indent)


def _explain_section(wanted: str) -> str | None:
    """`audit explain A9`: the section's heading, each of its rules' text, and the codes
    that enforce them; None when WANTED is no section of docs/protocol.md."""
    from auditor import protocol_text
    from auditor.protocols import rules_for_ref
    from auditor.replay import codes

    section = protocol_text.section(wanted)
    if section is None:
        return None
    lines = [f"protocol section {section.group} ({section.protocol}):", ""]
    enforcing: dict[str, Any] = {}
    for rule in section.rules:
        lines.append(f"{rule.ref}:")
        lines.append(_wrapped(rule.plain()))
        for r in rules_for_ref(rule.ref) + codes.for_ref(rule.ref):
            enforcing.setdefault(r.code, r)
    lines.append("")
    lines.append("enforced by:" if enforcing else "no rule of the auditor enforces it yet")
    lines.extend(_rule_line(enforcing[c]) for c in sorted(enforcing))
    lines.append(
        f"(`audit explain {section.rules[0].ref}` for one rule, `audit explain CODE` for a code)"
        if section.rules
        else ""
    )
    return "\n".join(lines).rstrip("\n") + "\n"


@cli.command()
@click.argument("code")
@_output_option
def explain(code: str, output_file: Path | None) -> None:
    """Print what rule CODE (A0201) checks, why it matters, an example and what to do; given
    a protocol rule (A2.1), print its text and the codes that enforce it; given a protocol
    section (A9), each of its rules and the codes that enforce them."""
    from auditor import protocol_text
    from auditor.engine import UNKNOWN_PROTOCOL
    from auditor.protocols import get_rule, rules_for_ref
    from auditor.replay import codes

    wanted = code.strip().upper()
    if _SECTION.fullmatch(wanted) and not _REF.fullmatch(wanted):
        text = _explain_section(wanted)
        if text is None:
            raise AuditorError(
                f"unknown rule code or protocol section {code!r}; `audit rules` "
                "lists the codes, docs/protocol.md the sections (A1-A10)"
            )
        _emit(text, output_file)
        return
    if _REF.fullmatch(wanted) and not get_rule(wanted):
        ref = protocol_text.get(wanted)
        enforcing = rules_for_ref(wanted) + codes.for_ref(wanted)
        if ref is None and not enforcing:
            raise AuditorError(
                f"no protocol rule {code!r} (docs/protocol.md lists them) and "
                "no rule enforces it; `audit rules` lists the rules"
            )
        lines = []
        if ref is not None:
            lines.append(
                f"protocol rule {wanted} ({ref.group or ref.protocol}):\n"
                + _wrapped(ref.plain())
                + "\n"
            )
        if wanted == "RUN_DIR":
            lines.append(
                f"enforced by:\n  {UNKNOWN_PROTOCOL}  error    RUN_DIR  unknown "
                "protocol (the engine, before any protocol's rules)"
            )
        else:
            lines.append("enforced by:" if enforcing else "no rule of the auditor enforces it yet")
        lines.extend(_rule_line(r) for r in enforcing)
        _emit("\n".join(lines) + "\n", output_file)
        return
    r = get_rule(wanted) or codes.get(wanted)
    if r is None:
        hint = (
            " (a protocol section or rule is written like A9 or A2.1, a code like A0201)"
            if re.fullmatch(r"[A-Z]\d+(\.\d+)?", wanted)
            else ""
        )
        raise AuditorError(f"unknown rule code {code!r}{hint}; `audit rules` lists them")
    by = "; raised by `audit replay`, never by `audit check`" if codes.get(r.code) else ""
    _emit(
        f"{r.code}: {r.title}\nprotocol rule {r.protocol_ref}, severity {r.severity}{by}\n"
        f"\n{r.doc}\n\nWhat to do: {r.fix}\n",
        output_file,
    )
