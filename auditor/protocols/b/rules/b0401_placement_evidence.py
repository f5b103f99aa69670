"""B0401: every accelerator policy has placement evidence of this session, with placed operations.

What it checks: each accelerator policy that started has a placement file
(`placement/<policy_id>.<ext>`) that a placement reader reads and that places at least one
operation on a device; where the format records when it was captured (our torch and ORT
records, a Windows ML record), that instant lies within the run: not before the declaration
(`declared_at`, within `CLOCK_TOLERANCE_S`) and no later than `CAPTURE_MARGIN_S` after the
last trial's end; for every policy with a placement file, where the file names the policy it
records, the model it placed (SHA-256) or the Core ML package its plan is of (a compute
plan's or profile's mlmodelc), they are this policy and the artifact it declares
(`policies[].artifact_sha256`, `policies[].artifact_file`, else `artifact.file`), and the
runtime the evidence is of (a Windows ML session, a Core ML report, an ONNX Runtime or torch
record) is the runtime the policy declares. Absent or empty evidence is missing evidence
(B10: latency without placement evidence is incomplete).
Reads: placement/* (each file's reader, its nodes, devices and providers, its capture time,
its `policy_id`, `model_sha256` and model path); manifest `/policies/*/role`, `/runtime`,
`/status`, `/artifact_sha256`, `/artifact_file`, `/artifact/file`, `/declared_at`; the
trials' windows.
Why it matters: B4: placement evidence is captured alongside the power trace; a figure of
an accelerator policy without it cannot say the accelerator ran anything, and evidence from
another session, another policy or another model says nothing about this one: the float16
package's compute plan (90.91 % on the Neural Engine) under the W8A8 package's name passes a
floor the W8A8 package was never shown to meet.
Example: `npu` has latency and energy but no `placement/npu.*` file; `ane-w8a8` runs
`model/PurposeDeepW8A8.mlpackage`, its compute plan is of `PurposeDeepF16.mlmodelc`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST
from auditor.protocols.b.facts.declared import policies
from auditor.protocols.b.facts.placement import (
    capture_outside,
    placement_of_other,
    placements,
    runtime_mismatch,
)
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0401",
    title="placement evidence per accelerator policy",
    protocol_ref="B4",
    severity="error",
    requires=("manifest",),
    fix="Capture the runtime's placement report (compute plan, ORT profile or graph "
    "assignment, Windows ML EP record) in the session that runs the trials, and keep it.",
)
def check(view: RunView) -> Iterator[Finding]:
    places = placements(view)
    for pol in policies(view).values():
        p = places.get(pol.policy_id)
        other = placement_of_other(view, p) or runtime_mismatch(view, p) if p is not None else None
        if p is not None and other:
            yield RULE.finding(
                f"policy {pol.policy_id}: its placement evidence {p.used} is not its own: {other}",
                artifact=p.used or p.files[0],
                observed=other,
                expected="a record of this policy and its artifact",
                subject=policy_subject(pol.policy_id),
            )
        if pol.role != "accelerator" or pol.status == "cannot_start":
            continue
        p = places.get(pol.policy_id)
        if p is None:
            yield RULE.finding(
                f"accelerator policy {pol.policy_id} has no placement evidence "
                f"(placement/{pol.policy_id}.<ext>): where it ran is not shown",
                artifact=MANIFEST,
                pointer="/policies",
                observed="absent",
                expected=f"placement/{pol.policy_id}.*",
                missing_evidence=True,
                subject=policy_subject(pol.policy_id),
            )
            continue
        where: dict[str, Any] = {
            "artifact": p.used or p.files[0],
            "subject": policy_subject(pol.policy_id),
        }
        if p.problem:
            yield RULE.finding(
                f"policy {pol.policy_id}: its placement evidence places no operation ({p.problem})",
                **where,
                observed=p.problem,
                expected="operations with a device",
                missing_evidence=True,
            )
            continue
        outside = capture_outside(view, p)
        if outside:
            yield RULE.finding(
                f"policy {pol.policy_id}: its placement evidence was {outside}: "
                "it is not of this session",
                **where,
                observed=p.captured_at,
                expected="within the run",
                evidence={"declared_at": view.m.get("declared_at")},
            )


RULE = check
