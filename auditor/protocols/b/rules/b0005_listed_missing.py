"""B0005: every file the manifest lists is present.

What it checks: each path of `manifest.artifacts` exists in the run dir.
Reads: manifest `/artifacts`; the list of files of the run dir.
Why it matters: a listed file that is gone is evidence removed from the dossier (B1, B6:
the raw trace is kept): a power trace, a placement file, a trial's answers.
Example: the manifest lists `power/gpu/trial-4.csv` and the file is absent.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.view import RunView
from auditor.protocols.sealed import listed_missing
from auditor.rule import rule


@rule(
    code="B0005",
    title="listed file missing",
    protocol_ref="B1",
    severity="error",
    requires=("manifest",),
    fix="Restore the file from the original run directory, or re-run.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from listed_missing(RULE, view)


RULE = check
