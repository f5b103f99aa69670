"""B0502: a Core ML gated evaluation has its ONNX comparison.

What it checks: a run with a Core ML policy names an ONNX artifact as its accepted reference
(`reference.artifact_file` ends in `.onnx`) and keeps that reference's answers
(reference/outputs.jsonl), against which agreement is computed.
Reads: manifest `/reference/artifact_file`, `/policies/*/runtime`; the presence of
reference/outputs.jsonl.
Why it matters: B5: "a gated evaluation without the ONNX comparison is invalid": a Core ML
conversion is accepted by agreeing with the ONNX artifact already in production, not with
itself.
Example: a `coreml` run whose reference is `model/candidate.mlpackage`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST
from auditor.protocols.b.facts.declared import policies
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(code="B0502", title="Core ML evaluation with its ONNX comparison", protocol_ref="B5",
      severity="error", requires=("manifest",),
      fix="Evaluate the Core ML package against the accepted ONNX artifact (eval.py "
          "--compare-onnx) and keep its answers as reference/outputs.jsonl.")
def check(view: RunView) -> Iterator[Finding]:
    coreml = [p.policy_id for p in policies(view).values()
              if p.runtime.lower() == "coreml"]
    if not coreml:
        return
    ref = view.m.get("reference") or {}
    file = ref.get("artifact_file")
    if not (isinstance(file, str) and file.lower().endswith(".onnx")):
        yield RULE.finding(f"Core ML policies {', '.join(coreml)} are gated against "
                           f"{file or ref.get('artifact')!r}, not an ONNX artifact: the "
                           "gated evaluation has no ONNX comparison", artifact=MANIFEST,
                           pointer="/reference/artifact_file", observed=file,
                           expected="the accepted ONNX artifact (*.onnx)")
    elif "reference_outputs" in view.absent:
        yield RULE.finding("the ONNX comparison's answers (reference/outputs.jsonl) are not "
                           "kept", artifact=MANIFEST, pointer="/reference/file",
                           observed="absent", expected="reference/outputs.jsonl")


RULE = check
