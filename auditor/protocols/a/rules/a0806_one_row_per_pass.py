"""A0806: one row per pass.

What it checks: no two rows share (`variant_id`, `phase`, `run_index`), the table's primary
key.
Reads: CSV `variant_id`, `phase`, `run_index`.
Why it matters: A8.1: one row per pass; a pass written twice (a retry appended, a row copied)
counts twice in every summary and hides which measurement is the real one.
Example: rows 7 and 8 are both `batch-4/warm-2`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.rules._csvfaults import faults
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0806",
    title="one row per pass",
    protocol_ref="A8.1",
    severity="error",
    fix="Keep one row per pass: remove the repeated row and keep the real measurement.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from faults(RULE, view, ("duplicate_row",), "one row per pass")


RULE = check
