"""A0802: every CSV record has exactly as many cells as the header.

What it checks: each record after the header has 38 cells; a record with a cell too many (an
unquoted comma in `notes`), too few, or an empty line is reported with its row and the line
it starts on.
Reads: the records of `resultats-bruts.csv` (cell counts).
Why it matters: A8.4: commas, quotes and line breaks in `notes` follow the CSV quoting rules;
an unquoted comma shifts the cells after it, and a reader that drops the extra cell loses
data silently.
Example: row 4 (line 5) `... ,7,1,123456,1,warm pass, ok` has 39 cells.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.rules._csvfaults import faults
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0802",
    title="CSV cell count",
    protocol_ref="A8.4",
    severity="error",
    fix="Quote notes that hold commas, quotes or line breaks (any CSV writer does).",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from faults(RULE, view, ("cells",), "as many cells as the header (38)")


RULE = check
