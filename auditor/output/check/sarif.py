"""`--format sarif`: SARIF 2.1.0 (OASIS), what code-scanning tools (GitHub code scanning,
GitLab, IDEs) read.

One `run`: `tool.driver.rules` holds one entry per rule that ran or was skipped, with its
title, protocol section and its whole documentation as help text; each finding is a
`result` with `ruleId`, `level` (error, warning, note) and a `physicalLocation` at the
artifact (relative to the `RUNDIR` base, the run directory) and, where known, the line and
column. A CSV row's line is the line where the row starts; a JSON pointer, which SARIF's
region cannot hold, goes into the result's properties. A finding about a whole file gets
the region SARIF gives a whole artifact (§3.30: a region is required by the consumers, and
sarif-multitool warns, SARIF2017, on a region-less physicalLocation): the file's bytes,
`byteOffset` 0 and `byteLength` its size, and for a text file also its lines, `startLine`
1 to `endLine` its last; an absent file (the finding says it is missing) gets the empty
region at its start, and `properties.artifactAbsent`. Skipped rules, and rules left out by
`--select`/`--ignore` (with their waivers), are tool notifications of the invocation; the
verdict, the rules not run and the waivers are properties of the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from auditor import __version__
from auditor.model import AuditResult, Finding, RuleInfo
from auditor.output import Format

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _rule_entry(info: RuleInfo) -> dict[str, Any]:
    summary = info.parts()["what"] or info.title  # the rule docstring's first part
    return {
        "id": info.code,
        "name": "".join(w.capitalize() for w in info.title.replace("-", " ").split() if w.isalnum())
        or info.code,
        "shortDescription": {"text": info.title},
        "fullDescription": {"text": summary},
        "help": {"text": info.doc or info.title},
        "defaultConfiguration": {"level": LEVELS[info.severity]},
        "properties": {"protocol_ref": info.protocol_ref, "tags": [info.protocol_ref]},
    }


_CHUNK = 1 << 20


def whole_file_region(path: Path) -> dict[str, int] | None:
    """The region of the whole file at PATH: its bytes and, when it is text (no NUL byte),
    its lines; None when there is no regular file there. Streams the file."""
    if path.is_symlink() or not path.is_file():
        return None
    size = newlines = 0
    text, last = True, b"\n"
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                size += len(chunk)
                newlines += chunk.count(b"\n")
                text = text and b"\0" not in chunk
                last = chunk[-1:]
    except OSError:
        return None
    region = {"byteOffset": 0, "byteLength": size}
    if text:  # a last line without its newline is a line too; an empty file has line 1
        region = {"startLine": 1, "endLine": max(1, newlines + (last != b"\n")), **region}
    return region


def _location(f: Finding, run_dir: Path) -> dict[str, Any]:
    physical: dict[str, Any] = {
        "artifactLocation": {"uri": quote(f.artifact or "", safe="/"), "uriBaseId": "RUNDIR"}
    }
    location: dict[str, Any] = {"physicalLocation": physical}
    if f.line is not None and f.line >= 1:
        physical["region"] = {"startLine": f.line}
        if f.column is not None and f.column >= 1:
            physical["region"]["startColumn"] = f.column
        return location
    region = whole_file_region(run_dir / (f.artifact or ""))
    if region is None:  # the finding is that the file is not there: the empty region at its start
        region = {"startLine": 1, "endLine": 1, "byteOffset": 0, "byteLength": 0}
        location["properties"] = {"artifactAbsent": True}
    physical["region"] = region
    return location


def sarif_log(result: AuditResult) -> dict[str, Any]:
    """The SARIF log of RESULT as a JSON-ready dict."""
    infos = {r.code: r for r in result.rules}
    for f in result.findings:  # engine-level findings (an internal error) have no rule module
        infos.setdefault(
            f.code,
            RuleInfo(f.code, f.title or f.code, f.protocol_ref, f.severity, f.title or f.code),
        )
    order = sorted(infos)
    index = {code: i for i, code in enumerate(order)}
    results = []
    for f in result.findings:
        item: dict[str, Any] = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": LEVELS[f.severity],
            "message": {"text": f.message},
            "properties": {
                "protocol_ref": f.protocol_ref,
                "evidence": f.evidence,
                **({"row": f.row} if f.row is not None else {}),
                **({"jsonPointer": f.pointer} if f.pointer else {}),
                **({"missingEvidence": True} if f.missing_evidence else {}),
            },
        }
        if f.artifact:
            item["locations"] = [_location(f, Path(result.run_dir))]
        results.append(item)
    root = Path(result.run_dir).resolve().as_uri().rstrip("/") + "/"
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gpubench-audit",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://gpubench-audit.invalid/docs/protocol",
                        "rules": [_rule_entry(infos[c]) for c in order],
                    }
                },
                "originalUriBaseIds": {"RUNDIR": {"uri": root}},
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "toolExecutionNotifications": [
                            *(
                                {
                                    "level": "note",
                                    "message": {"text": f"rule not run: {s.reason}"},
                                    "descriptor": {"id": s.code},
                                }
                                for s in result.skipped
                            ),
                            *(
                                {
                                    "level": "warning" if n in result.unwaived else "note",
                                    "message": {
                                        "text": "rule left out by --select/--ignore: "
                                        + n.describe()
                                    },
                                    "descriptor": {"id": n.code},
                                }
                                for n in result.rules_not_run
                            ),
                        ],
                    }
                ],
                "results": results,
                "properties": {
                    "verdict": result.verdict,
                    "protocol": result.protocol,
                    "experiment_id": result.experiment_id,
                    "rules_run": list(result.rules_run),
                    "rules_not_run": [n.to_json() for n in result.rules_not_run],
                    "waivers": [w.to_json() for w in result.waivers],
                },
            }
        ],
    }


def render(result: AuditResult, *, color: bool = False) -> str:
    return json.dumps(sarif_log(result), indent=2, ensure_ascii=False, default=str) + "\n"


FORMAT = Format("sarif", "SARIF 2.1.0, for code-scanning tools", render)
