"""A0801: `resultats-bruts.csv` is UTF-8 RFC 4180 CSV with exactly the header of RUN_DIR.md.

What it checks: the bytes decode as UTF-8 (no byte-order mark), the quoting parses (RFC 4180:
a quoted field ends with a quote followed by a comma or line end), and the header row is
exactly the 38 column names of RUN_DIR.md in order.
Reads: the bytes of `resultats-bruts.csv` (encoding, quoting, header row).
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


@rule(code="A0801", title="CSV file and header", protocol_ref="A8.1", severity="error",
      fix="Write resultats-bruts.csv with exactly the protocol's header, in order.")
def check(view: RunView) -> Iterator[Finding]:
    yield from faults(RULE, view, ("limit", "encoding", "quoting", "header"),
                      "UTF-8, RFC 4180, header exactly as RUN_DIR.md")


RULE = check
