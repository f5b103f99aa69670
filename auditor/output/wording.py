"""A finding's key evidence in a few words, for the text output and the report: what the run
holds at the place of the fault (the missing ID, the claimed value) and what the rule
expected (the recomputed value). Every renderer uses this one wording."""

from __future__ import annotations

import json
from typing import Any

from auditor.model import AuditResult, Finding

MAX_ITEMS = 3
"""A list of IDs shows its first items and how many more there are."""
MAX_CHARS = 80


def value_text(value: Any) -> str:
    """VALUE in a few characters: floats to 6 significant digits, lists cut to MAX_ITEMS."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "empty"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "none"
        shown = ", ".join(value_text(v) for v in value[:MAX_ITEMS])
        return shown + (f" (+{len(value) - MAX_ITEMS} more)" if len(value) > MAX_ITEMS else "")
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def key_evidence(finding: Finding) -> str:
    """`X (expected Y)` from the finding's `observed` and `expected`; "" when it has none."""
    ev = finding.evidence
    if "observed" not in ev and "expected" not in ev:
        return ""
    if "observed" not in ev:
        return f"expected {value_text(ev['expected'])}"
    text = value_text(ev["observed"])
    return text + (f" (expected {value_text(ev['expected'])})" if "expected" in ev else "")


def with_evidence(finding: Finding) -> str:
    """The finding's message followed by its key evidence."""
    ev = key_evidence(finding)
    return f"{finding.message}: {ev}" if ev else finding.message


def code_ranges(codes: list[str], order: list[str]) -> str:
    """CODES as runs of neighbours in ORDER (every rule's code, in order): `A0001-A0007,
    A0101`."""
    wanted, parts = set(codes), []
    run: list[str] = []
    for code in [*order, ""]:
        if code in wanted:
            run.append(code)
            continue
        if run:
            parts.append(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}")
            run = []
    return ", ".join(parts)


def not_run_lines(result: AuditResult) -> list[str]:
    """The rules left out by `--select`/`--ignore`, in a few lines: each waived one with
    its justification, the others as ranges of codes by severity (`audit rules` lists them
    one by one)."""
    left = result.rules_not_run
    if not left:
        return []
    order = sorted({*(r.code for r in result.rules), *(n.code for n in left)})
    waived = [n for n in left if n.waiver is not None]
    lines = [f"not run (--select/--ignore): {len(left)} rule(s), {len(waived)} waived"]
    for severity, why in (
        ("error", "not waived: the verdict cannot be accepted"),
        ("warning", "not waived"),
        ("info", "not waived"),
    ):
        group = [n.code for n in left if n.waiver is None and n.severity == severity]
        if group:
            lines.append(f"  {len(group)} {severity} rule(s) {why}: {code_ranges(group, order)}")
    lines.extend(f"  {n.describe()}" for n in waived)
    return lines
