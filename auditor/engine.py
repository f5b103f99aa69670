"""`audit check`'s core, which knows no protocol: find the run's protocol from its manifest,
let that protocol's package load the run dir (through the readers) into its view, run its
selected rules over the view, and collect findings and skipped rules into an `AuditResult`.
Returns results; never prints or exits (that is `auditor.cli`'s job)."""

from __future__ import annotations

import dataclasses
import json
import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from auditor import protocols
from auditor.dirkind import absent, wrong_kind
from auditor.errors import AuditorError
from auditor.model import AuditResult, Finding, Skipped, Waiver
from auditor.protocols.base import LoadedRun, Protocol
from auditor.rule import Rule
from auditor.rundir import scan
from auditor.waivers import not_run

MANIFEST = "manifest.json"
MANIFEST_PROBE_BYTES = 64 << 20
"""A manifest larger than this is not read to find the protocol (its loader reports it)."""

UNKNOWN_PROTOCOL = "R0001"
"""Code of the one finding of a run whose protocol the auditor does not know."""


def _matches(code: str, patterns: Iterable[str]) -> bool:
    return any(code.startswith(p) for p in patterns)


def select_rules(
    rules: Iterable[Rule],
    select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    waivers: Iterable[Waiver] = (),
) -> list[Rule]:
    """RULES whose code starts with one of SELECT (all when empty) and none of IGNORE. A code
    no rule of any protocol starts with (in SELECT, IGNORE or WAIVERS) is bad usage (a typo
    would silently run nothing, or waive nothing)."""
    select, ignore = tuple(select), tuple(ignore)
    codes = (*select, *ignore, *(w.code for w in waivers))
    # every protocol's rules are imported only when there is a code to look up
    every = protocols.all_rules() if codes else []
    unknown = [c for c in codes if not any(r.code.startswith(c) for r in every)]
    if unknown:
        raise AuditorError(
            f"no rule code starts with {', '.join(unknown)}; `audit rules` lists them"
        )
    return [
        r
        for r in rules
        if (not select or _matches(r.code, select)) and not _matches(r.code, ignore)
    ]


def declared_protocol(root: Path) -> str | None:
    """The `protocol` value of ROOT's manifest, when it can be read at all."""
    path = root / MANIFEST
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MANIFEST_PROBE_BYTES:
            return None
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    value = doc.get("protocol") if isinstance(doc, dict) else None
    return value if isinstance(value, str) else None


def find_protocol(root: Path) -> tuple[Protocol | None, str | None]:
    """(the protocol of the run at ROOT, the name its manifest declares). Without a readable
    declaration, the files that only one protocol's runs hold decide. Raises `AuditorError`
    when ROOT is not a run dir at all (nothing a protocol recognises)."""
    declared = declared_protocol(root)
    if declared is not None:
        return protocols.get(declared), declared
    present = {p.name for p in root.iterdir()} if root.is_dir() else set()
    found = protocols.by_signature(present)
    if found is None and MANIFEST not in present:
        if "report.html" in present and (root / "run" / MANIFEST).is_file():
            raise AuditorError(
                f"{root}: this is a report directory; the run it audited is "
                f"in {root / 'run'} (audit check {root / 'run'})"
            )
        raise AuditorError(
            f"{root}: not a run directory (no {MANIFEST}, and none of the "
            "files a protocol's run holds)"
        )
    return found, None


def audit(
    run_dir: Path,
    select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    waivers: Iterable[Waiver] = (),
) -> tuple[LoadedRun | None, AuditResult]:
    """Load RUN_DIR and run the selected rules of its protocol; the view is returned for
    renderers that show more than findings (the report). The rules left out are named in
    the result with their WAIVERS (an unwaived error rule left out makes it `incomplete`).
    Raises `AuditorError` only for bad usage: RUN_DIR not a directory, not a run, or an
    unknown rule code. A crash while loading the run is a finding (a bug), not an exception."""
    root = Path(run_dir)
    if problem := wrong_kind(root, "run", "audit check"):
        raise AuditorError(problem)
    if problem := absent(root):
        raise AuditorError(problem)
    select, ignore, waivers = tuple(select), tuple(ignore), tuple(waivers)
    protocol, declared = find_protocol(root)
    if protocol is None:
        select_rules((), select, ignore, waivers)  # still refuse an unknown code
        known = ", ".join(sorted(protocols.PACKAGES))
        finding = Finding(
            code=UNKNOWN_PROTOCOL,
            severity="error",
            protocol_ref="RUN_DIR",
            title="unknown protocol",
            message=(
                f"manifest.json declares protocol {declared!r}, which the auditor does "
                f"not know (known: {known}); no rule can judge this run"
                if declared is not None
                else "manifest.json names no protocol (or cannot be read) and no file of the "
                f"run identifies one (known: {known}); no rule can judge this run"
            ),
            artifact=MANIFEST,
            pointer="/protocol",
            evidence={"observed": declared, "expected": sorted(protocols.PACKAGES)},
        )
        return None, AuditResult(
            run_dir=str(run_dir),
            protocol=declared,
            experiment_id=None,
            findings=(finding,),
            skipped=(),
            rules_run=(),
            waivers=waivers,
        )
    rules = select_rules(protocol.rules, select, ignore, waivers)
    # by identity: `in` on the list compared the rules field by field, pairwise (0.3 ms a run)
    chosen = {id(r) for r in rules}
    left_out = not_run([r for r in protocol.rules if id(r) not in chosen], waivers)
    try:
        view = protocol.load(
            scan(root, protocol.parsed_prefixes, protocol.streamed_prefixes, protocol.parse_limits)
        )
    except Exception as exc:  # a crash while loading is a bug of the auditor: say so
        return None, AuditResult(
            run_dir=str(run_dir),
            protocol=protocol.name,
            experiment_id=None,
            findings=(_internal_error(protocol, "loading the run", exc),),
            skipped=(),
            rules_run=(),
            rules=tuple(r.info() for r in rules),
            rules_not_run=left_out,
            waivers=waivers,
        )
    findings: list[Finding] = []
    skipped: list[Skipped] = []
    ran: list[str] = []
    for rule in rules:
        missing = [k for k in rule.requires if k not in view.available]
        if missing:
            reasons = "; ".join(view.unavailable_reason.get(k, f"{k} not loaded") for k in missing)
            skipped.append(Skipped(rule.code, f"needs {', '.join(missing)}: {reasons}"))
            continue
        ran.append(rule.code)
        try:
            found = [
                protocol.locate(view, f if f.title else dataclasses.replace(f, title=rule.title))
                for f in rule.run(view)
            ]
        except Exception as exc:  # a crash in a rule is a bug of the auditor: say so
            findings.append(_internal_error(protocol, f"rule {rule.code}", exc))
            continue
        findings.extend(found)
    findings.sort(key=Finding.sort_key)
    m = view.manifest if isinstance(view.manifest, dict) else {}
    result = AuditResult(
        run_dir=str(run_dir),
        protocol=protocol.name,
        experiment_id=_text(m.get("experiment_id")),
        findings=tuple(findings),
        skipped=tuple(skipped),
        rules_run=tuple(ran),
        rules=tuple(r.info() for r in rules),
        rules_not_run=left_out,
        waivers=waivers,
    )
    return view, result


def load_run(run_dir: Path) -> LoadedRun:
    """The view of the run at RUN_DIR, loaded by its protocol's package (no rule run)."""
    root = Path(run_dir)
    if not root.is_dir():
        raise AuditorError(f"{run_dir}: not a directory")
    protocol, declared = find_protocol(root)
    if protocol is None:
        raise AuditorError(f"{run_dir}: unknown protocol {declared!r}")
    return protocol.load(
        scan(root, protocol.parsed_prefixes, protocol.streamed_prefixes, protocol.parse_limits)
    )


def run_check(
    run_dir: Path,
    select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    waivers: Iterable[Waiver] = (),
) -> AuditResult:
    """`audit check`: the AuditResult of RUN_DIR."""
    return audit(run_dir, select, ignore, waivers)[1]


def _internal_error(protocol: Protocol, what: str, exc: Exception) -> Finding:
    """The finding of a crash of the auditor itself while doing WHAT (`rule A0201`)."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f"{Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else "?"
    return Finding(
        code=protocol.internal_error_code,
        severity="error",
        protocol_ref=protocol.internal_error_ref,
        title="internal error of the auditor",
        message=f"{what} crashed ({type(exc).__name__}: {str(exc)[:300]}); this is a bug of "
        "the auditor, not a finding about the run",
        evidence={
            "rule": what.removeprefix("rule "),
            "exception": type(exc).__name__,
            "where": where,
        },
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
