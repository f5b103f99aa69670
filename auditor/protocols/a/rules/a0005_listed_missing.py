"""A0005: every file the manifest lists is present.

What it checks: each path of `manifest.artifacts` exists in the run dir.
Reads: manifest `/artifacts`; the list of files of the run dir.
Why it matters: a listed file that is gone is evidence removed from the dossier (A1.4, A10.1):
an output, a trace or the economics file the run's claims rest on.
Example: the manifest lists `traces/memory/batch-1/warm-2.json` and the file is absent.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.view import RunView
from auditor.protocols.sealed import listed_missing
from auditor.rule import rule


@rule(
    code="A0005",
    title="listed file missing",
    protocol_ref="A10.1",
    severity="error",
    requires=("manifest",),
    fix="Restore the file from the original run directory, or re-run.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from listed_missing(RULE, view)


RULE = check
