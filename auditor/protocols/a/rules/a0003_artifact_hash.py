"""A0003: every file listed in the manifest has the SHA-256 the manifest records.

What it checks: for each entry of `manifest.artifacts`, the SHA-256 of the file on disk (a
file too large to hash is reported by A0002 instead).
Reads: `manifest.json` `/artifacts`; every file's bytes (hashed once by the run-dir walk).
Why it matters: the dossier must be the one that was measured (A10.1); a file edited after the
run (an output fixed by hand, a CSV row changed) no longer matches its hash.
Example: `outputs/batch-1/warm-3.jsonl` edited after the run: observed hash 9f2c..., expected
the manifest's 41d0....
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.view import RunView
from auditor.protocols.sealed import hash_mismatches
from auditor.rule import rule


@rule(
    code="A0003",
    title="file hash differs from the manifest",
    protocol_ref="A10.1",
    severity="error",
    requires=("manifest",),
    fix=(
        "Re-run: a file changed after the run is not what was measured. Never fix an output "
        "by hand."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    yield from hash_mismatches(RULE, view)


RULE = check
