"""What a rule is: stable metadata (code, title, protocol ref, severity, docstring, the
artifacts it needs) around a pure function of the loaded run view that yields findings.

A rule never reads a file and never prints; `auditor.check` runs it, and skips it with a
reason when an artifact it `requires` is missing or malformed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from auditor.model import Finding, Severity

if TYPE_CHECKING:
    from auditor.load import RunView

CheckFn = Callable[["RunView"], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    code: str
    title: str
    protocol_ref: str
    severity: Severity
    requires: tuple[str, ...]
    """Artifact kinds (keys of `RunView.available`) the rule needs to run at all."""
    check: CheckFn
    doc: str
    """What it checks, why it matters, an example: from the module docstring."""

    def finding(
        self,
        message: str,
        *,
        artifact: str | None = None,
        location: str | None = None,
        observed: Any = None,
        expected: Any = None,
        severity: Severity | None = None,
        protocol_ref: str | None = None,
        missing_evidence: bool = False,
        **evidence: Any,
    ) -> Finding:
        """A finding of this rule; `observed`/`expected` go into its evidence."""
        ev: dict[str, Any] = dict(evidence)
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
            location=location,
            evidence=ev,
            missing_evidence=missing_evidence,
        )

    def run(self, view: RunView) -> Iterator[Finding]:
        yield from self.check(view)


def rule(
    *, code: str, title: str, protocol_ref: str, severity: Severity, requires: tuple[str, ...] = ()
) -> Callable[[CheckFn], Rule]:
    """Declare a rule. The calling module's docstring becomes the rule's documentation."""

    def wrap(fn: CheckFn) -> Rule:
        module = inspect.getmodule(fn)
        doc = inspect.cleandoc(module.__doc__ or "") if module else ""
        return Rule(code, title, protocol_ref, severity, tuple(requires), fn, doc)

    return wrap
