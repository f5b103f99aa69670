"""A0004: no file in the run dir is missing from the manifest's artifact list.

What it checks: every file under the run dir other than `manifest.json` is listed in
`manifest.artifacts`.
Reads: the list of files of the run dir; manifest `/artifacts`.
Why it matters: an unlisted file was added or renamed after the run was sealed (A10.1); it
cannot be trusted as part of the dossier, and a rule could read it as evidence.
Example: `outputs/batch-4/warm-6.jsonl` on disk but not in the manifest.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.view import RunView
from auditor.protocols.sealed import unlisted_files
from auditor.rule import rule


@rule(
    code="A0004",
    title="file not listed in the manifest",
    protocol_ref="A10.1",
    severity="error",
    requires=("manifest",),
    fix="Remove the added file, or re-run so the manifest lists it.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from unlisted_files(RULE, view)


RULE = check
