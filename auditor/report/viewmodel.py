"""The report's view model: a plain, JSON-serializable tree built from the loaded run and the
audit result only. It never re-checks anything: what is wrong with the run is what the
findings say; this module only arranges and summarises.

This module builds the parts every protocol shares: the verdict and why in two lines, the
findings grouped by cause (each with its evidence, its consequences and what to do), the
appendix quoting the protocol rules the report cites (from docs/protocol.md), and the data of
the PDF's attachments (every artifact's hash, every rule). The run's protocol package
(`auditor/protocols/<p>/report.py`) supplies its own sections through `sections(view,
result, inputs=)` (INPUTS: the files given on the command line that it takes), among them
`summary`: the rows of page 1 (a table of configurations, a table of offers, the decision,
the cautions), which the shared template
draws whatever the protocol. It may also supply `finding_scope(view, finding)`: the part of
the run a finding is about, in words.

Every value is a str, int, float, bool, None, list or dict, so the tree can be compared with
a golden file (tests/protocols/a/golden/report_viewmodel.json) and rendered by any template.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from auditor import protocol_text, protocols
from auditor.model import SEVERITY_ORDER, AuditResult, Finding
from auditor.output.wording import key_evidence
from auditor.protocols.base import ReportPart
from auditor.protocols.names import CITATION
from auditor.report import attachments
from auditor.rule import Rule

SHOWN_PER_GROUP = 6
"""A cause lists at most this many findings of one rule and file; the rest are counted (every
finding is in audit.json, attached to the PDF)."""
REF = CITATION
"""A protocol rule cited in the report's text (`A2.1`, `B7`, `RUN_DIR`): the one pattern of
`auditor.protocols.names`."""

Scope = Callable[[Finding], str | None]


# -- findings grouped by cause --------------------------------------------------------------


def _ids(f: Finding) -> set[str]:
    """The IDs a finding's evidence lists (missing, repeated or extra IDs)."""
    out: set[str] = set()
    for key in ("observed", "expected"):
        v = f.evidence.get(key)
        if isinstance(v, list):
            out |= {x for x in v if isinstance(x, str)}
    return out


def _target(f: Finding) -> str | None:
    """The file a finding's evidence points at when it is not the file at fault: a CSV row or
    an archived check about one output file names that file (`output`)."""
    t = f.evidence.get("output")
    return t if isinstance(t, str) and t != f.artifact else None


def _groups(findings: list[Finding]) -> list[list[Finding]]:
    """Findings of one rule that share a file or an ID, and findings that one file is
    missing, together (union-find)."""
    parent = list(range(len(findings)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple, int] = {}
    for i, f in enumerate(findings):
        keys: list[tuple[str | None, ...]] = [
            ("file", f.code, f.artifact),
            *(("id", f.code, x) for x in _ids(f)),
        ]
        if f.missing_evidence and f.artifact:  # one absent file, whatever rules say so
            keys.append(("absent", f.artifact))
        for key in keys:
            if key in first:
                parent[find(i)] = find(first[key])
            else:
                first[key] = i
    groups: dict[int, list[Finding]] = {}
    for i, f in enumerate(findings):
        groups.setdefault(find(i), []).append(f)
    return list(groups.values())


def _item(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code,
        "artifact": f.artifact,
        "location": f.location,
        "message": f.message,
        "evidence": key_evidence(f),
        "severity": f.severity,
    }


def _block(fs: list[Finding]) -> dict[str, Any]:
    """Findings of one rule on one file or ID set: shown up to SHOWN_PER_GROUP, the rest
    counted."""
    fs = sorted(fs, key=Finding.sort_key)
    artifacts = sorted({f.artifact or "" for f in fs})
    return {
        "code": fs[0].code,
        "protocol_ref": fs[0].protocol_ref,
        "title": fs[0].title,
        "severity": min((f.severity for f in fs), key=SEVERITY_ORDER.__getitem__),
        "artifacts": [a for a in artifacts if a],
        "items": [_item(f) for f in fs[:SHOWN_PER_GROUP]],
        "more": max(0, len(fs) - SHOWN_PER_GROUP),
    }


def group_by_cause(
    findings: Iterable[Finding], rules: Mapping[str, Rule], scope: Scope | None = None
) -> list[dict[str, Any]]:
    """The findings as causes: a rule's findings that share a file or an ID are one cause,
    and a finding that points at another file (a CSV row or an archived check about an output
    file at fault) is listed as a consequence of the cause on that file, not as a cause of
    its own. Each cause has its evidence, its consequences, the part of the run it affects
    (SCOPE) and what to do (the rule's `fix`)."""
    groups = sorted(
        _groups(sorted(findings, key=Finding.sort_key)), key=lambda g: min(f.sort_key() for f in g)
    )
    at_fault: dict[str, int] = {}
    for n, g in enumerate(groups):
        for f in g:
            if f.artifact and not _target(f):
                at_fault.setdefault(f.artifact, n)
    roots: dict[int, list[Finding]] = {}
    follows: dict[int, list[Finding]] = {}
    for n, g in enumerate(groups):
        for f in g:
            home = at_fault.get(_target(f) or "")
            if home is not None and home != n:
                follows.setdefault(home, []).append(f)
            else:
                roots.setdefault(n, []).append(f)
    causes = []
    for n in sorted(roots):
        root = roots[n]
        after = follows.get(n, [])
        by_rule: dict[tuple[str, str | None], list[Finding]] = {}
        for f in after:
            by_rule.setdefault((f.code, f.artifact), []).append(f)
        scopes = sorted({s for s in (scope(f) if scope else None for f in (*root, *after)) if s})
        rule = rules.get(root[0].code)
        causes.append(
            {
                **_block(root),
                "severity": min(
                    (f.severity for f in (*root, *after)), key=SEVERITY_ORDER.__getitem__
                ),
                "consequences": [_block(fs) for fs in by_rule.values()],
                "affects": scopes,
                "fix": rule.fix if rule else None,
                "findings": len(root) + len(after),
            }
        )
    return sorted(causes, key=lambda c: (SEVERITY_ORDER[c["severity"]], c["code"]))


def findings_section(
    result: AuditResult, rules: Mapping[str, Rule], scope: Scope | None = None
) -> dict[str, Any]:
    """The causes, and the rules that could not run grouped by their reason."""
    skipped: dict[str, list[str]] = {}
    for sk in result.skipped:
        skipped.setdefault(sk.reason, []).append(sk.code)
    return {
        "causes": group_by_cause(result.findings, rules, scope),
        "counts": result.counts(),
        "total": len(result.findings),
        "skipped": [{"reason": reason, "codes": codes} for reason, codes in skipped.items()],
    }


def verdict_section(
    result: AuditResult, causes: list[dict[str, Any]], headline: str | None
) -> dict[str, Any]:
    """The verdict and why, in two lines."""
    counts = result.counts()
    errors = [c for c in causes if c["severity"] == "error"]
    tail = f" {headline}." if headline else ""
    if result.verdict == "accepted":
        first = (
            "Every claim of the run matches what the auditor recomputed from its raw files." + tail
        )
    elif result.verdict == "rejected":
        c = errors[0]
        where = c["artifacts"][0] if c["artifacts"] else "the run"
        scope = f" ({', '.join(c['affects'])})" if c["affects"] else ""
        item = c["items"][0]
        ev = item["message"] + (f": {item['evidence']}" if item["evidence"] else "")
        more = len(errors) - 1
        first = (
            f"{c['code']} ({c['title']}, protocol {c['protocol_ref']}) fails in {where}"
            f"{scope}: {ev}"
            + (f"; and {more} more cause(s) of error" if more else "")
            + "."
            + tail
            + " Do not rank or buy on this run."
        )
    elif not any(f.missing_evidence for f in result.findings) and result.unwaived:
        first = (
            f"{len(result.unwaived)} error rule(s) were left out of this audit "
            "(--select/--ignore) without a waiver: "
            + ", ".join(n.code for n in result.unwaived)
            + "; nothing wrong was found by the rules that ran."
            + tail
        )
    else:
        missing = [f for f in result.findings if f.missing_evidence]
        first = (
            "Evidence the protocol requires is missing"
            + (f" ({missing[0].message})" if missing else "")
            + "; nothing wrong was found in what is there."
            + tail
        )
    found = (
        f"{counts['error']} error(s) from {len(errors)} cause(s)" if counts["error"] else "no error"
    )
    found += f", {counts['warning']} warning(s)" if counts["warning"] else ", no warning"
    found += f", {counts['info']} info" if counts["info"] else ""
    second = (
        f"{len(result.rules_run)} rules run: {found}"
        + (f"; {len(result.skipped)} rule(s) could not run" if result.skipped else "")
        + (
            f"; {len(result.rules_not_run)} left out (--select/--ignore), "
            f"{len(result.unwaived)} of them error rules without a waiver"
            if result.rules_not_run
            else ""
        )
        + "."
    )
    return {
        "value": result.verdict,
        "headline": result.verdict.upper(),
        "why": [first, second],
        "counts": counts,
        "rules_not_run": [n.to_json() for n in result.rules_not_run],
        "waivers": [w.to_json() for w in result.waivers],
    }


# -- what the report cites, and its attachments -------------------------------------------


def _strings(tree: Any) -> Iterable[str]:
    if isinstance(tree, str):
        yield tree
    elif isinstance(tree, Mapping):
        for v in tree.values():
            yield from _strings(v)
    elif isinstance(tree, list):
        for v in tree:
            yield from _strings(v)


def cited_refs(tree: Any) -> list[str]:
    """Every protocol rule the report's text cites, in the protocol text's order."""
    cited = {m for s in _strings(tree) for m in REF.findall(s)}
    order = list(protocol_text.rules())
    return sorted(cited, key=lambda r: (order.index(r) if r in order else len(order), r))


def appendix_section(refs: list[str], rules: Iterable[Rule]) -> list[dict[str, Any]]:
    """The protocol rules the report cites, quoted from docs/protocol.md, each with the codes
    that check it."""
    out = []
    for ref in refs:
        text = protocol_text.get(ref)
        out.append(
            {
                "ref": ref,
                "group": (text.group or text.protocol) if text else None,
                "segments": [[s, code] for s, code in text.segments()]
                if text
                else [[f"{ref}: not in docs/protocol.md", False]],
                "codes": sorted(r.code for r in rules if r.protocol_ref == ref),
            }
        )
    return out


def artifacts_section(files: Mapping[str, str] | None) -> list[dict[str, str]]:
    return [{"path": p, "sha256": h} for p, h in sorted((files or {}).items())]


def rules_section(rules: Iterable[Rule]) -> list[dict[str, Any]]:
    return [
        {
            "code": r.code,
            "title": r.title,
            "protocol_ref": r.protocol_ref,
            "severity": r.severity,
            "doc": r.doc,
            "fix": r.fix,
        }
        for r in sorted(rules, key=lambda r: r.code)
    ]


def signature_section(signer: str | None) -> dict[str, Any]:
    """Who signed the report (the certificate's name), or that nobody did."""
    return {
        "signer": signer,
        "text": (
            f"Signed (PDF PAdES signature and bundle.dsse.json) by: {signer}. "
            "Check it with audit verify or pdfsig before relying on it."
            if signer
            else "UNSIGNED: this report was built without a signing key; "
            "nothing proves it was not altered."
        ),
        "test_key": bool(signer and "NOT FOR PROCUREMENT USE" in signer.upper()),
    }


def protocol_report(protocol: str | None) -> ReportPart | None:
    """The report part of PROTOCOL (None for an unknown protocol)."""
    p = protocols.get(protocol) if protocol else None
    return p.report() if p is not None and p.report is not None else None


def build_viewmodel(
    view: Any,
    result: AuditResult,
    rules: Iterable[Rule],
    *,
    inputs: Mapping[str, tuple[Any, str]] | None = None,
    tool_version: str = "",
    generated_at: str = "",
    signer: str | None = None,
    replay: Any = None,
) -> dict[str, Any]:
    """The whole tree, from the loaded run and its audit only; INPUTS are the files the
    protocol's part takes from the command line, each (data, label) (`--offers`); REPLAY
    (an `auditor.replay.result.ReplayResult`, `--replay`) adds its section and its codes to
    the cited rules."""
    rules = list(rules)
    module = protocol_report(result.protocol)
    own = (
        {} if module is None or view is None else module.sections(view, result, inputs=inputs or {})
    )
    findings = findings_section(
        result,
        {r.code: r for r in rules},
        (lambda f: module.finding_scope(view, f))
        if module is not None and view is not None
        else None,
    )
    summary = own.pop("summary", None)
    vm: dict[str, Any] = {
        "title": f"Audit report: {result.experiment_id or 'unknown experiment'}",
        "tool": {"name": "gpubench-audit", "version": tool_version},
        "generated_at": generated_at,
        "signature": signature_section(signer),
        "protocol": result.protocol,
        "experiment_id": result.experiment_id,
        "verdict": verdict_section(
            result, findings["causes"], summary.get("headline") if summary else None
        ),
        "summary": summary,
        "findings": findings,
        **own,
    }
    if replay is not None:
        from auditor.replay import codes
        from auditor.report.replay_section import section

        vm["replay"] = section(replay)
        rules += codes.for_protocol(replay.protocol)
    vm["appendix"] = appendix_section(
        cited_refs([vm, [c["protocol_ref"] for c in findings["causes"]]]), rules
    )
    files = None if view is None else view.files_on_disk
    own_files = module.attachments(view) if module is not None and view is not None else ()
    vm["attachments"] = attachments.listed(set(files or ()), own_files, replay=replay is not None)
    vm["artifacts"] = artifacts_section(files)
    vm["rules"] = rules_section(rules)
    return vm
