"""B0004: no file in the run dir is missing from the manifest's artifact list.

What it checks: every file under the run dir other than `manifest.json` is listed in
`manifest.artifacts`.
Reads: the list of files of the run dir; manifest `/artifacts`.
Why it matters: an unlisted file was added after the run was sealed (B1); a rule could read
it as evidence (a second power trace, a placement file of another session).
Example: `placement/npu.coreml.log` on disk but not in the manifest.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.view import RunView
from auditor.protocols.sealed import unlisted_files
from auditor.rule import rule


@rule(
    code="B0004",
    title="file not listed in the manifest",
    protocol_ref="B1",
    severity="error",
    requires=("manifest",),
    fix="Remove the added file, or re-run so the manifest lists it.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from unlisted_files(RULE, view)


RULE = check
