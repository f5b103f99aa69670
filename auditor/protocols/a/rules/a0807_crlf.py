"""A0807: records end with CRLF (warning).

What it checks: line ends outside quoted fields are CRLF, as RFC 4180 and the table schema's
dialect say; a bare LF is reported (line breaks inside quoted `notes` are free).
Reads: the line ends of `resultats-bruts.csv`.
Why it matters: A8.4: the usual CSV rules; most readers accept LF, so this is a warning, but a
strict reader may split or join records differently.
Example: a CSV written with `\n` line ends on Linux.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.rules._csvfaults import faults
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0807",
    title="CRLF line ends",
    protocol_ref="A8.4",
    severity="warning",
    fix="Write CRLF line ends (RFC 4180), as the runner does.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from faults(RULE, view, ("line_ending",), "CRLF")


RULE = check
