"""A0804: numbers use a decimal point, never a decimal comma.

What it checks: number cells written like `1,234` inside a quoted cell (the decimal comma of
Portuguese or French locales).
Reads: the number cells of `resultats-bruts.csv`.
Why it matters: A8.2: the protocol fixes the decimal point; a decimal comma is read as text, as
a thousands separator (1,234 becomes 1234) or as two cells, depending on the reader.
Example: row 6 with `elapsed_seconds` "1,042".
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.rules._csvfaults import faults
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0804",
    title="decimal point",
    protocol_ref="A8.2",
    severity="error",
    fix="Write decimals with a point (0.5), never a comma.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from faults(RULE, view, ("decimal_comma",), "a decimal point, e.g. 1.042")


RULE = check
