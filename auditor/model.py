"""The result types every part of the auditor shares: findings, skipped rules, the audit
result. Small frozen dataclasses, so a renderer can only format them, never change them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
Verdict = Literal["accepted", "rejected", "incomplete"]

SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Finding:
    """One fault or observation, tied to the rule that found it and the place it is."""

    code: str
    """Stable code of the rule, e.g. `A0201`."""
    severity: Severity
    protocol_ref: str
    """The rule of PROTOCOL.md enforced, e.g. `A2.1`."""
    message: str
    """One sentence a reviewer understands."""
    artifact: str | None = None
    """Path of the file at fault, relative to the run dir (`/`-separated)."""
    location: str | None = None
    """`row N` (CSV data row, 1-based), `line N`, or a JSON pointer; None when the whole file."""
    evidence: dict[str, Any] = field(default_factory=dict)
    """Observed and expected values (`observed`, `expected`) and any other facts."""
    title: str = ""
    missing_evidence: bool = False
    """True when the finding is that required evidence is absent (drives `incomplete`)."""

    def sort_key(self) -> tuple:
        return (
            SEVERITY_ORDER[self.severity],
            self.code,
            self.artifact or "",
            _location_key(self.location),
            self.message,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "protocol_ref": self.protocol_ref,
            "title": self.title,
            "message": self.message,
            "artifact": self.artifact,
            "location": self.location,
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class Skipped:
    """A rule that could not run, and why (a missing or malformed artifact)."""

    code: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "reason": self.reason}


@dataclass(frozen=True)
class AuditResult:
    """Everything `audit check` concluded about one run dir; what every renderer draws."""

    run_dir: str
    protocol: str | None
    experiment_id: str | None
    findings: tuple[Finding, ...]
    skipped: tuple[Skipped, ...]
    rules_run: tuple[str, ...]

    @property
    def verdict(self) -> Verdict:
        if any(f.severity == "error" and not f.missing_evidence for f in self.findings):
            return "rejected"
        if self.skipped or any(f.missing_evidence for f in self.findings):
            return "incomplete"
        return "accepted"

    @property
    def exit_code(self) -> int:
        return 1 if any(f.severity == "error" for f in self.findings) else 0

    def counts(self) -> dict[str, int]:
        out = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            out[f.severity] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": "1",
            "run_dir": self.run_dir,
            "protocol": self.protocol,
            "experiment_id": self.experiment_id,
            "verdict": self.verdict,
            "counts": self.counts(),
            "rules_run": list(self.rules_run),
            "findings": [f.to_json() for f in self.findings],
            "skipped": [s.to_json() for s in self.skipped],
        }


def _location_key(location: str | None) -> tuple:
    """Sort `row 10` after `row 9`, not after `row 1`."""
    if not location:
        return (0, "", 0)
    head, _, tail = location.rpartition(" ")
    return (1, head, int(tail)) if tail.isdigit() else (2, location, 0)
