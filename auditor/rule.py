"""What a rule is: stable metadata (code, title, protocol ref, severity, docstring, the
artifacts it needs) around a pure function of a protocol's loaded run view that yields
findings.

A rule never reads a file, never parses and never prints; `auditor.engine` runs it, and skips
it with a reason when an artifact it `requires` is missing or malformed. Rules live in their
protocol's package (`auditor/protocols/<p>/rules/`), one module each.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from auditor.model import Finding, RuleInfo, Severity, Subject

CheckFn = Callable[[Any], Iterable[Finding]]
DEFAULT_FIX = (
    "Read the rule (`audit explain CODE`), correct the cause in the pipeline that "
    "wrote the run, and re-run; never edit a run directory by hand."
)
"""What to do, for a rule that does not say more."""
"""A check takes its protocol's run view (e.g. `auditor.protocols.a.view.RunView`)."""


@dataclass(frozen=True)
class Rule:
    code: str
    title: str
    protocol_ref: str
    severity: Severity
    requires: tuple[str, ...]
    """Artifact kinds (keys of the view's `available`) the rule needs to run at all."""
    check: CheckFn
    doc: str
    """What it checks, why it matters, an example: from the module docstring."""
    fix: str = DEFAULT_FIX
    """What to do about a finding of this rule, in one or two sentences (report, `explain`)."""

    def finding(
        self,
        message: str,
        *,
        artifact: str | None = None,
        row: int | None = None,
        line: int | None = None,
        column: int | None = None,
        pointer: str | None = None,
        observed: Any = None,
        expected: Any = None,
        evidence: Mapping[str, Any] | None = None,
        subject: Subject | None = None,
        severity: Severity | None = None,
        protocol_ref: str | None = None,
        missing_evidence: bool = False,
    ) -> Finding:
        """A finding of this rule: where it is (ARTIFACT and the place in it), what it is
        about (SUBJECT: a variant, pass, policy or trial), and its EVIDENCE, with OBSERVED
        and EXPECTED added to it."""
        ev: dict[str, Any] = dict(evidence or {})
        if observed is not None:
            ev["observed"] = observed
        if expected is not None:
            ev["expected"] = expected
        return Finding(
            code=self.code,
            severity=severity or self.severity,
            protocol_ref=protocol_ref or self.protocol_ref,
            title=self.title,
            message=message,
            artifact=artifact,
            row=row,
            line=line,
            column=column,
            pointer=pointer,
            evidence=ev,
            missing_evidence=missing_evidence,
            subject=subject,
        )

    def run(self, view: Any) -> Iterator[Finding]:
        yield from self.check(view)

    def info(self) -> RuleInfo:
        return RuleInfo(self.code, self.title, self.protocol_ref, self.severity, self.doc, self.fix)


def rule(
    *,
    code: str,
    title: str,
    protocol_ref: str,
    severity: Severity,
    requires: tuple[str, ...] = (),
    fix: str = DEFAULT_FIX,
) -> Callable[[CheckFn], Rule]:
    """Declare a rule. The calling module's docstring becomes the rule's documentation; `fix`
    says what to do about one of its findings (shown in the report and by `audit explain`)."""

    def wrap(fn: CheckFn) -> Rule:
        module = inspect.getmodule(fn)
        doc = inspect.cleandoc(module.__doc__ or "") if module else ""
        return Rule(code, title, protocol_ref, severity, tuple(requires), fn, doc, fix)

    return wrap
