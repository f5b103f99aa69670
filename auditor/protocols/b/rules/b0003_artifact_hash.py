"""B0003: every file listed in the manifest has the SHA-256 the manifest records.

What it checks: for each entry of `manifest.artifacts`, the SHA-256 of the file on disk.
Reads: `manifest.json` `/artifacts`; every file's bytes (hashed once by the run-dir walk).
Why it matters: the recorded hashes (B1: the artifact's SHA-256 among them) are what make
the dossier the one that was measured; a trace or an outputs file edited after the run no
longer matches its hash.
Example: `power/cpu/trial-2.jsonl` edited after the run: observed hash 9f2c..., expected
the manifest's 41d0....
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.view import RunView
from auditor.protocols.sealed import hash_mismatches
from auditor.rule import rule


@rule(
    code="B0003",
    title="file hash differs from the manifest",
    protocol_ref="B1",
    severity="error",
    requires=("manifest",),
    fix="Re-run: a file changed after the run is not what was measured.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from hash_mismatches(RULE, view)


RULE = check
