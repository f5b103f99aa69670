"""Turn the loader's CSV format faults (`RunView.results_faults`) into findings of a rule."""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import COLUMN_REFS
from auditor.protocols.a.view import RunView
from auditor.protocols.sealed import csv_fault_findings
from auditor.rule import Rule


def faults(
    rule: Rule, view: RunView, kinds: tuple[str, ...], expected: str, by_column: bool = False
) -> Iterator[Finding]:
    """Findings of RULE for the CSV faults of KINDS; BY_COLUMN: each under the protocol rule
    its column serves (`COLUMN_REFS`), the most specific one."""
    yield from csv_fault_findings(
        rule, view.results_faults, kinds, expected, COLUMN_REFS if by_column else None
    )
