"""The report's view model: a plain, JSON-serializable tree built from the loaded run and the
audit result only. It never re-checks anything: what is wrong with the run is what the
findings say; this module only arranges and summarises.

This module builds the parts every protocol shares (verdict and why, findings, the artifact
hash table, the rules appendix) and asks the run's protocol package for its own sections
(`auditor/protocols/<p>/report.py`: `sections(view, result, offers=, offers_label=)`).

Every value is a str, int, float, bool, None, list or dict, so the tree can be compared with
a golden file (tests/golden/report_viewmodel.json) and rendered by any template.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any

from auditor import protocols
from auditor.model import AuditResult
from auditor.rule import Rule

VERDICT_TEXT = {
    "accepted": "ACCEPTED: no error was found; the claims in the run match what the auditor "
                "recomputed from its raw files.",
    "rejected": "REJECTED: at least one error was found; the run does not support the claims "
                "it makes. Do not rank or buy on it.",
    "incomplete": "INCOMPLETE: evidence the protocol requires is missing, and nothing wrong "
                  "was found in what is there. It cannot be accepted as it stands.",
}
NOT_RECORDED = "not recorded"


def json_safe(value: Any) -> Any:
    """A JSON-safe copy (tuples to lists, unknown objects to str)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return str(value)


def lookup(d: Any, *keys: str, default: Any = None) -> Any:
    for k in keys:
        if not isinstance(d, Mapping) or k not in d:
            return default
        d = d[k]
    return d


def verdict_section(result: AuditResult) -> dict[str, Any]:
    counts = result.counts()
    why: list[str] = [VERDICT_TEXT[result.verdict]]
    errors = [f for f in result.findings if f.severity == "error"]
    missing = [f for f in result.findings if f.missing_evidence]
    if errors:
        codes = sorted({f.code for f in errors})
        why.append(f"{len(errors)} error finding(s) from rule(s) {', '.join(codes)}; the first: "
                   f"{errors[0].message}")
    if missing:
        why.append(f"{len(missing)} finding(s) say required evidence is missing.")
    if result.skipped:
        why.append(f"{len(result.skipped)} rule(s) could not run: "
                   + "; ".join(f"{s.code} ({s.reason})" for s in result.skipped[:3])
                   + (" ..." if len(result.skipped) > 3 else ""))
    if result.unwaived:
        why.append(f"{len(result.unwaived)} error rule(s) were left out of this audit "
                   "(--select/--ignore) without a waiver: "
                   + ", ".join(n.code for n in result.unwaived) + ".")
    why.append(f"{len(result.rules_run)} rules run; {counts['error']} error(s), "
               f"{counts['warning']} warning(s), {counts['info']} info.")
    return {"value": result.verdict, "headline": result.verdict.upper(), "why": why,
            "counts": counts,
            "rules_not_run": [n.to_json() for n in result.rules_not_run],
            "waivers": [w.to_json() for w in result.waivers]}


def findings_section(result: AuditResult) -> dict[str, Any]:
    rows = [{
        "code": f.code, "severity": f.severity, "protocol_ref": f.protocol_ref,
        "title": f.title, "artifact": f.artifact, "location": f.location,
        "message": f.message,
    } for f in sorted(result.findings, key=lambda f: f.sort_key())]
    return {"rows": rows, "skipped": [s.to_json() for s in result.skipped]}


def artifacts_section(files: Mapping[str, str] | None) -> list[dict[str, str]]:
    return [{"path": p, "sha256": h} for p, h in sorted((files or {}).items())]


def rules_section(rules: Iterable[Any]) -> list[dict[str, str]]:
    return [{"code": r.code, "title": r.title, "protocol_ref": r.protocol_ref,
             "severity": r.severity, "doc": r.doc} for r in sorted(rules, key=lambda r: r.code)]


def protocol_report(protocol: str | None) -> Any:
    """The report module of PROTOCOL's package (None for an unknown protocol)."""
    p = protocols.get(protocol) if protocol else None
    return importlib.import_module(p.report_module) if p and p.report_module else None


def build_viewmodel(view: Any, result: AuditResult, rules: Iterable[Rule], *,
                    offers: dict | None = None, offers_label: str | None = None,
                    tool_version: str = "", generated_at: str = "",
                    signer: str | None = None) -> dict[str, Any]:
    """The whole tree, from the loaded run and its audit only; `offers` overrides the run's
    own offers (`--offers`)."""
    module = protocol_report(result.protocol)
    own = ({} if module is None or view is None else
           module.sections(view, result, offers=offers, offers_label=offers_label))
    return {
        "title": f"Audit report: {result.experiment_id or 'unknown experiment'}",
        "tool": {"name": "gpubench-audit", "version": tool_version},
        "generated_at": generated_at,
        "signature": {
            "signer": signer,
            "text": (f"Signed (PDF PAdES signature and bundle.dsse.json) by: {signer}. "
                     "Check it with audit verify or pdfsig before relying on it."
                     if signer else "UNSIGNED: this report was built without a signing key; "
                     "nothing proves it was not altered."),
            "test_key": bool(signer and "NOT FOR PROCUREMENT USE" in signer.upper()),
        },
        "protocol": result.protocol,
        "experiment_id": result.experiment_id,
        "verdict": verdict_section(result),
        "findings": findings_section(result),
        **own,
        "artifacts": artifacts_section(None if view is None else view.files_on_disk),
        "rules": rules_section(rules),
    }
