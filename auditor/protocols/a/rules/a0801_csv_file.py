"""A0801: `resultats-bruts.csv` is UTF-8 RFC 4180 CSV with exactly the header of RUN_DIR.md.

What it checks: the bytes decode as UTF-8 (no byte-order mark), the quoting parses (RFC 4180:
a quoted field ends with a quote followed by a comma or line end), no cell is longer than the
CSV reader's size limit (`csv.field_size_limit()`, 131,072 characters: a longer cell, such as
a huge `notes`, is reported at the line where its record starts, with the limit, and the table
is not read past it), the file is not larger than the reader's `MAX_BYTES`, and the header row
is exactly the 38 column names of RUN_DIR.md in order, and no data row repeats it (two files
appended: the repeated row is named and left out).
Reads: the bytes of `resultats-bruts.csv` (encoding, quoting, cell and file sizes, header
row).
Why it matters: A8.1: one row per pass with exactly the listed columns; a renamed, missing or
reordered column shifts every figure under the wrong name, and a file that does not parse
cannot be audited at all.
Example: a header with `elapsed_s` instead of `elapsed_seconds` at column 29.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.rules._csvfaults import faults
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0801",
    title="CSV file and header",
    protocol_ref="A8.1",
    severity="error",
    fix="Write resultats-bruts.csv with exactly the protocol's header, in order.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from faults(
        RULE,
        view,
        ("limit", "encoding", "quoting", "header"),
        "UTF-8, RFC 4180, header exactly as RUN_DIR.md",
    )


RULE = check
