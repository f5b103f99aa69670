"""B0008: trials.csv and policies.csv are RFC 4180 CSV with RUN_DIR.md's header and typed cells.

What it checks: UTF-8 without a byte-order mark, quoting that parses, the header exactly the
columns of RUN_DIR.md in order, as many cells per record as the header, every cell of its
column's type and allowed values (`schemas/trials.table.json`, `policies.table.json`: decimal
point, no unit, `ok`/`failed`/`skipped`, `ac`/`battery`, fractions in 0-1), a value where one
is required; CRLF record ends (a warning when not). Each finding cites the protocol rule its
column serves.
Reads: the bytes of trials.csv and policies.csv.
Why it matters: B3's figures are compared cell by cell; a renamed column, a decimal comma or
"1.5 W" cannot be recomputed, and a file that does not parse cannot be audited at all.
Example: trials.csv row 4 with `average_power_w` "12,5": a decimal comma.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import COLUMN_REFS
from auditor.protocols.b.view import RunView
from auditor.protocols.sealed import csv_fault_findings
from auditor.rule import rule

KINDS = (
    "limit",
    "encoding",
    "quoting",
    "header",
    "cells",
    "type",
    "decimal_comma",
    "empty",
    "duplicate_row",
    "line_ending",
)


@rule(
    code="B0008",
    title="CSV format",
    protocol_ref="B3",
    severity="error",
    fix=(
        "Write trials.csv and policies.csv with exactly RUN_DIR.md's header, any CSV writer's "
        "quoting, plain numbers with a decimal point and no units."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    yield from csv_fault_findings(
        RULE,
        view.csv_faults,
        KINDS,
        "RFC 4180, RUN_DIR.md's header, the column's type",
        COLUMN_REFS,
    )


RULE = check
