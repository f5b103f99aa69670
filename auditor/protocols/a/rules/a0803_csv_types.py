"""A0803: every CSV cell has its column's type and allowed values.

What it checks: integers are decimal digits, numbers use a decimal point (no thousands
separator, no unit), booleans are `true`/`false`, `phase` is cold/warm, `duration_days` is 3,
7 or 30, and minima hold (counts and bytes not negative), per
`schemas/resultats-bruts.table.json`; an integer beyond 64 bits or a number that overflows
to infinity is a type fault, never an empty cell. Each finding cites the protocol rule its
column serves.
Reads: every cell of `resultats-bruts.csv`, typed by `schemas/resultats-bruts.table.json`.
Why it matters: A8.2: seconds, bytes and USD cents as plain numbers are what make rows
comparable; "1.2 s", "TRUE" or "2 GB" cannot be compared or recomputed.
Example: row 2 with `ids_match` "yes", or `peak_allocated_bytes` "2GB".
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.rules._csvfaults import faults
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0803",
    title="CSV cell types",
    protocol_ref="A8.2",
    severity="error",
    fix="Write plain numbers: seconds, bytes, USD cents, true/false; no units in cells.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from faults(
        RULE, view, ("type",), "the column's type (resultats-bruts.table.json)", by_column=True
    )


RULE = check
