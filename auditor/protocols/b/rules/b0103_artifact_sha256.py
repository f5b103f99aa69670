"""B0103: the model artifact kept in the run has the SHA-256 the run records for it.

What it checks: when the manifest's `artifact.file`, or a policy's `artifact_file`, is a file
of the run dir, its SHA-256 (from the run-dir walk) equals `artifact_sha256` (the policy's
own for its file); when it is a folder of the run dir (a Core ML `.mlpackage`), its package
SHA-256 does (`facts/declared.py` `package_sha256`: over each file's path inside it and
SHA-256). An artifact kept outside the run is recorded, not hashed here.
Reads: manifest `/artifact/file`, `/artifact_sha256`, `/policies/*/artifact_file`,
`/policies/*/artifact_sha256`; the files' bytes.
Why it matters: B1 records the artifact measured; a recorded hash of another file would tie
the figures to a model that was not the one run (a requantized package, a re-export).
Example: `model/model.onnx` hashes to 5a1e..., the ONNX policy records 45c6...; or the
files of `model/coreml/w8a8.mlpackage` were replaced after its gate.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST
from auditor.protocols.b.facts.declared import package_sha256, policies
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0103",
    title="artifact SHA-256 matches the file",
    protocol_ref="B1",
    severity="error",
    requires=("manifest",),
    fix="Record the SHA-256 of the very artifact each policy ran (sha256sum of the file).",
)
def check(view: RunView) -> Iterator[Finding]:
    m = view.m
    art = (m.get("artifact") or {}).get("file")
    pairs: list[tuple[Any, Any, str, str | None]] = [
        (art, m["artifact_sha256"], "/artifact_sha256", None)
    ]
    for i, p in enumerate(policies(view).values()):
        if p.artifact_file and p.artifact_sha256:
            pairs.append(
                (p.artifact_file, p.artifact_sha256, f"/policies/{i}/artifact_sha256", p.policy_id)
            )
    for rel, recorded, pointer, pid in pairs:
        actual = (
            view.files_on_disk.get(rel) or package_sha256(view.files_on_disk, rel)
            if isinstance(rel, str)
            else None
        )
        if actual and actual != recorded:
            yield RULE.finding(
                f"{rel} hashes to another SHA-256 than the one recorded for it",
                artifact=MANIFEST,
                pointer=pointer,
                observed=actual,
                expected=recorded,
                subject=policy_subject(pid) if pid else None,
                evidence={"file": rel},
            )


RULE = check
