"""B0502: a Core ML gated evaluation has its kept and hashed ONNX comparison.

What it checks: a run with a Core ML policy (declared `coreml`, or whose placement evidence
is a Core ML compute plan or per-operation report, whatever runtime it declares) names an
ONNX artifact as its accepted reference (`reference.artifact_file` ends in `.onnx`), records
that artifact's SHA-256 (`reference.artifact_sha256`), which the file has when the run keeps
it, and keeps that reference's answers (reference/outputs.jsonl), against which agreement is
computed.
Reads: manifest `/reference/artifact_file`, `/reference/artifact_sha256`,
`/policies/*/runtime`; placement/* (the frame's providers); the presence of
reference/outputs.jsonl and the reference artifact's bytes.
Why it matters: B5: "a gated evaluation without the ONNX comparison is invalid": a Core ML
conversion is accepted by agreeing with the ONNX artifact already in production, not with
itself; an ONNX artifact without its hash can be any export, and answers not kept cannot be
compared again.
Example: a `coreml` run whose reference is `model/candidate.mlpackage`; one whose
`model/model.onnx` hashes to 5a1e..., the reference recorded as 45c6....
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST, REFERENCE_OUTPUTS
from auditor.protocols.b.facts.declared import policies
from auditor.protocols.b.facts.placement import is_coreml
from auditor.protocols.b.view import RunView
from auditor.rule import rule

SHA256 = re.compile(r"[0-9a-f]{64}")


@rule(
    code="B0502",
    title="Core ML evaluation with its ONNX comparison",
    protocol_ref="B5",
    severity="error",
    requires=("manifest",),
    fix="Evaluate the Core ML package against the accepted ONNX artifact (eval.py "
    "--compare-onnx), record its SHA-256 and keep its answers as "
    "reference/outputs.jsonl.",
)
def check(view: RunView) -> Iterator[Finding]:
    coreml = [pid for pid in policies(view) if is_coreml(view, pid)]
    if not coreml:
        return
    ref = view.m.get("reference") or {}
    file, sha = ref.get("artifact_file"), ref.get("artifact_sha256")
    if not (isinstance(file, str) and file.lower().endswith(".onnx")):
        yield RULE.finding(
            f"Core ML policies {', '.join(coreml)} are gated against "
            f"{file or ref.get('artifact')!r}, not an ONNX artifact: the "
            "gated evaluation has no ONNX comparison",
            artifact=MANIFEST,
            pointer="/reference/artifact_file",
            observed=file,
            expected="the accepted ONNX artifact (*.onnx)",
        )
        return
    if "reference_outputs" in view.absent:
        yield RULE.finding(
            "the ONNX comparison's answers (reference/outputs.jsonl) are not kept",
            artifact=MANIFEST,
            pointer="/reference/file",
            observed="absent",
            expected=REFERENCE_OUTPUTS,
        )
    if not (isinstance(sha, str) and SHA256.fullmatch(sha)):
        yield RULE.finding(
            f"the ONNX comparison's artifact {file} has no recorded SHA-256: "
            "the gated evaluation cannot say which export it compared with",
            artifact=MANIFEST,
            pointer="/reference/artifact_sha256",
            observed=sha,
            expected="the artifact's SHA-256 (64 hex)",
        )
        return
    actual = view.files_on_disk.get(file)
    if actual is not None and actual != sha:
        yield RULE.finding(
            f"the ONNX comparison's artifact {file} hashes to another SHA-256 "
            "than the one recorded: the answers are not of the export named",
            artifact=MANIFEST,
            pointer="/reference/artifact_sha256",
            observed=actual,
            expected=sha,
            evidence={"file": file},
        )


RULE = check
