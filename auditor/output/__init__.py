"""Output formats of `audit check`: one module per format, registered in `FORMATS`, each
with `render(result, *, color=False) -> str`. They only format an `AuditResult`; adding a
format is adding one module and one line here."""

from __future__ import annotations

import importlib
from typing import Protocol

from auditor.model import AuditResult


class Renderer(Protocol):
    def __call__(self, result: AuditResult, *, color: bool = False) -> str: ...


FORMATS: dict[str, tuple[str, str]] = {
    "text": ("auditor.output.text", "findings for a terminal, one line each, verdict last"),
    "json": ("auditor.output.json", "the AuditResult (schemas/audit-result.schema.json)"),
    "sarif": ("auditor.output.sarif", "SARIF 2.1.0, for code-scanning tools"),
    "junit": ("auditor.output.junit", "JUnit XML: one test case per rule (GitLab, Jenkins)"),
    "github": ("auditor.output.github", "GitHub Actions workflow-command annotations"),
}


def renderer(name: str) -> Renderer:
    """The `render` function of format NAME (a key of `FORMATS`)."""
    return importlib.import_module(FORMATS[name][0]).render
