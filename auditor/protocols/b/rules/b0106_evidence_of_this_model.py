"""B0106: every record that names its model names the run's model.

What it checks: a placement record that names the SHA-256 of the model it placed (a Windows
ML or ONNX Runtime record) of a policy that declares no artifact of its own names the
manifest's `artifact_sha256` (a policy's own artifact is B0401's); a power-state record
(power_state/*: the session chosen on battery) names one of the run's models (the
manifest's or a policy's `artifact_sha256`).
Reads: placement/*, power_state/* (`model_sha256`); manifest `/artifact_sha256`,
`/policies/*/artifact_sha256`.
Why it matters: PROTOCOL.md, "Evidence belongs to the run only when it shows so": the same
model, the hash of the file it ran. A record of another model's session says what the
runtime chose for that model: the lite model's battery session shows nothing of the deep
model's rung being skipped.
Example: power_state/battery.winml.json records model 0b5e..., the run measures 9c2f....
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.belonging import describe, model_mismatches
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0106",
    title="evidence of this model",
    protocol_ref="B1",
    severity="error",
    requires=("manifest",),
    fix="Record the session of the very model the run measures (its SHA-256), and keep "
    "records of other models out of the run.",
)
def check(view: RunView) -> Iterator[Finding]:
    for m in model_mismatches(view):
        yield RULE.finding(
            f"{m.path} is a record of another model: {describe(m)}",
            artifact=m.path,
            pointer="/model_sha256",
            observed=m.named[0],
            expected=list(m.expected),
            evidence={"run_model_from": m.source},
        )


RULE = check
