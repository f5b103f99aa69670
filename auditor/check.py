"""`audit check`'s core: load the run dir once, run every selected rule over the view, and
collect findings and skipped rules into an `AuditResult`. Returns results; never prints or
exits (that is `auditor.cli`'s job)."""

from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Iterable
from pathlib import Path

from auditor.errors import AuditorError
from auditor.load import RunView, load_run
from auditor.model import AuditResult, Finding, Skipped
from auditor.rules import all_rules
from auditor.rules.base import Rule

INTERNAL_ERROR = "A0000"
"""Code of a crash inside a rule: a bug of the auditor, reported as such, never a traceback."""


def _matches(code: str, patterns: Iterable[str]) -> bool:
    return any(code.startswith(p) for p in patterns)


def select_rules(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[Rule]:
    """Rules whose code starts with one of `select` (all when empty) and none of `ignore`."""
    select, ignore = tuple(select), tuple(ignore)
    unknown = [c for c in (*select, *ignore) if not any(r.code.startswith(c)
                                                        for r in all_rules())]
    if unknown:  # a typo would silently run nothing (or everything): bad usage
        raise AuditorError(f"no rule code starts with {', '.join(unknown)}; "
                           "`audit rules` lists them")
    return [r for r in all_rules()
            if (not select or _matches(r.code, select)) and not _matches(r.code, ignore)]


def audit(run_dir: Path, select: Iterable[str] = (), ignore: Iterable[str] = ()
          ) -> tuple[RunView, AuditResult]:
    """Load RUN_DIR and run the selected rules; the view is returned for renderers that
    show more than findings (the report)."""
    view = load_run(Path(run_dir))
    findings: list[Finding] = []
    skipped: list[Skipped] = []
    ran: list[str] = []
    for rule in select_rules(select, ignore):
        missing = [k for k in rule.requires if k not in view.available]
        if missing:
            reasons = "; ".join(view.unavailable_reason.get(k, f"{k} not loaded")
                                for k in missing)
            skipped.append(Skipped(rule.code, f"needs {', '.join(missing)}: {reasons}"))
            continue
        ran.append(rule.code)
        try:
            found = list(rule.run(view))
        except Exception as exc:  # a crash in a rule is a bug of the auditor: say so
            where = traceback.extract_tb(exc.__traceback__)[-1]
            findings.append(Finding(
                code=INTERNAL_ERROR, severity="error", protocol_ref="A10.1",
                title="internal error in a rule",
                message=f"rule {rule.code} crashed ({type(exc).__name__}: {exc}); this is a bug "
                        "of the auditor, not a finding about the run",
                evidence={"rule": rule.code, "exception": type(exc).__name__,
                          "where": f"{Path(where.filename).name}:{where.lineno}"}))
            continue
        findings.extend(f if f.title else dataclasses.replace(f, title=rule.title)
                        for f in found)
    findings.sort(key=Finding.sort_key)
    m = view.manifest if isinstance(view.manifest, dict) else {}
    result = AuditResult(
        run_dir=str(run_dir),
        protocol=m.get("protocol") if isinstance(m.get("protocol"), str) else None,
        experiment_id=m.get("experiment_id") if isinstance(m.get("experiment_id"), str)
        else None,
        findings=tuple(findings), skipped=tuple(skipped), rules_run=tuple(ran))
    return view, result


def run_check(run_dir: Path, select: Iterable[str] = (), ignore: Iterable[str] = ()
              ) -> AuditResult:
    """`audit check`: the AuditResult of RUN_DIR."""
    return audit(run_dir, select, ignore)[1]
