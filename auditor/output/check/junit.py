"""`--format junit`: JUnit XML, which GitLab, Jenkins and most CI servers show as a test
report. One test suite per run, one test case per rule: a rule with error findings fails
with one `<failure>` (JUnit allows one per case; its message counts the errors and names
the first, its text holds every one, a line each), a rule that could not run is skipped
with its reason, warnings and notes go to the case's `system-out`; a rule left out by
`--select`/`--ignore` is skipped with its waiver (or "not waived"), and the waivers are
suite properties. The `tests`, `failures` and `skipped` counts of both headers count test
cases, as junitparser and xunitparser (which asserts it) read them. Text from the run is
escaped, and characters XML 1.0 cannot hold are replaced, so a hostile ID never breaks the
file."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from auditor.model import AuditResult, Finding
from auditor.output import Format
from auditor.output.wording import with_evidence

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _x(text: object) -> str:
    return _NOT_XML.sub("\ufffd", str(text))


def _line(f: Finding) -> str:
    where = f"{f.artifact}:{f.location}" if f.artifact and f.location else (f.artifact or "")
    return _x(f"{where} {f.code} {with_evidence(f)}".strip())


def render(result: AuditResult, *, color: bool = False) -> str:
    titles = {r.code: r.title for r in result.rules}
    by_code: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_code.setdefault(f.code, []).append(f)
        titles.setdefault(f.code, f.title or f.code)
    skipped = {s.code: s.reason for s in result.skipped}
    for n in result.rules_not_run:  # left out on purpose: a skipped case saying why (or not)
        titles.setdefault(n.code, n.title or n.code)
        skipped[n.code] = f"not run (--select/--ignore): {n.describe()}"
    codes = sorted(set(titles))
    errors_of = {
        code: [f for f in by_code.get(code, []) if f.severity == "error"]
        for code in codes
        if code not in skipped
    }
    failures = sum(1 for found in errors_of.values() if found)
    suites = ET.Element(
        "testsuites",
        name="gpubench-audit",
        tests=str(len(codes)),
        failures=str(failures),
        errors="0",
        skipped=str(len(skipped)),
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=_x(f"audit {result.run_dir}"),
        tests=str(len(codes)),
        failures=str(failures),
        errors="0",
        skipped=str(len(skipped)),
    )
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("verdict", result.verdict),
        ("protocol", result.protocol),
        ("experiment_id", result.experiment_id),
        ("rules_not_run", ",".join(n.code for n in result.rules_not_run)),
        ("unwaived", ",".join(n.code for n in result.unwaived)),
    ):
        ET.SubElement(props, "property", name=key, value=_x(value or ""))
    for w in result.waivers:
        ET.SubElement(props, "property", name=f"waiver {w.code}", value=_x(w.justification))
    classname = f"audit.{result.protocol or 'unknown'}"
    for code in codes:
        case = ET.SubElement(
            suite, "testcase", classname=classname, name=_x(f"{code} {titles[code]}")
        )
        if code in skipped:
            ET.SubElement(case, "skipped", message=_x(skipped[code]))
            continue
        errors = errors_of[code]
        if errors:
            first = with_evidence(errors[0])  # the evidence the text output shows, too
            message = (
                first if len(errors) == 1 else f"{len(errors)} error findings, the first: {first}"
            )
            failure = ET.SubElement(case, "failure", type=code, message=_x(message))
            failure.text = "\n".join(_line(f) for f in errors)
        found = by_code.get(code, [])
        others = [f for f in found if f.severity != "error"]
        if others:
            ET.SubElement(case, "system-out").text = "\n".join(
                f"{f.severity}: {_line(f)}" for f in others
            )
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


FORMAT = Format("junit", "JUnit XML: one test case per rule (GitLab, Jenkins)", render)
