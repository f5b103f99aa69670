"""B0108: each revision the manifest records is the SHA-256 of the file its kind names.

What it checks: `revisions.model` is the SHA-256 of the weights the run keeps and measures
(the manifest's `artifact.file`), `revisions.tokenizer` that of the tokenizer it keeps
(`replay.tokenizer.file`, else `model/tokenizer.json`), where the revision is a SHA-256 and
the file is in the run dir (`facts/checkpoint.py`).
Reads: manifest `/revisions`, `/artifact/file`, `/replay/tokenizer/file`; the files' bytes.
Why it matters: PROTOCOL.md, "A revision is the SHA-256 of the file(s) its kind names":
the revisions pin what was measured. Weights or a tokenizer replaced after the run, the
revisions left as they were, would let the dossier keep files that never ran under the
names of those that did (and `audit compare` pool them as the same workload).
Example: `revisions.tokenizer` is sha256:5005..., model/tokenizer.json hashes to 9c1e....
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.checkpoint import revision_mismatches
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0108",
    title="revisions are the run's files",
    protocol_ref="B1",
    severity="error",
    requires=("manifest",),
    fix="Keep the very files the run measured; a revision is the SHA-256 of its file "
    "(sha256sum), recorded when the run is declared.",
)
def check(view: RunView) -> Iterator[Finding]:
    for r in revision_mismatches(view):
        yield RULE.finding(
            f"the {r.kind} revision is sha256:{r.recorded[:16]}..., but "
            f"{r.file}, the file it names, hashes to {r.actual[:16]}...: the "
            "file kept is not the one the revision pins",
            artifact=r.file,
            observed=r.actual,
            expected=r.recorded,
            evidence={"revision": f"/revisions/{r.kind}"},
        )


RULE = check
