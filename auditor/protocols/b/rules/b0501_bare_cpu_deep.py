"""B0501: a deep-tier model runs on an NPU or GPU provider; bare CPU is valid only for lite.

What it checks: for every accelerator policy whose placement evidence records a Windows ML
session (a record of the compiled session and its assigned providers and devices), whatever
runtime the manifest declares for it (the provider and device come from the evidence, never
from the declared `runtime` or `compute_units` string), the session's first assigned
execution provider after compilation is one the protocol allows for a deep model (QNN on the
NPU, OpenVINO on the NPU or GPU, NvTensorRT-RTX, MIGraphX) on a device it may be bound to,
and ahead-of-time compilation, when done, succeeded; for a deep-tier model it was done (B5
on Windows: the provider and device are recorded after AOT compilation; a lite model on
the CPU needs none); a policy declared Windows ML whose
evidence records no session is missing evidence; for any run of a deep-tier model, no
CPU-only policy other than the diagnostic baseline is a candidate.
Reads: placement/* (`assigned`, `compilation`, the frame's providers); manifest
`/model_tier`, `/baseline_policy`, `/policies/*/role`, `/runtime`.
Why it matters: B5: "Deep requires QNN NPU, OpenVINO NPU/GPU, NvTensorRT-RTX, or MIGraphX;
bare CPU is only valid for lite": a deep model on the CPU provider cannot ship, however its
figures look.
Example: a deep model whose `MAX_EFFICIENCY` session was assigned CPUExecutionProvider on a
machine without an NPU; a DirectML session (DmlExecutionProvider on the GPU) declared as
runtime `onnxruntime`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.declared import WINDOWS_ML_RUNTIMES, model_tier, policies
from auditor.protocols.b.facts.placement import is_windows_ml, placements
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule

DEEP_PROVIDERS = {
    "qnnexecutionprovider": {"NPU"},
    "openvinoexecutionprovider": {"NPU", "GPU"},
    "nvtensorrtrtxexecutionprovider": {"GPU"},
    "migraphxexecutionprovider": {"GPU"},
}
"""Execution provider -> the device types it may be bound to for a deep model (B5)."""


@rule(
    code="B0501",
    title="deep model on an NPU or GPU provider",
    protocol_ref="B5",
    severity="error",
    requires=("manifest",),
    fix="Run the deep model on an allowed NPU/GPU provider (or ship the lite model for CPU).",
)
def check(view: RunView) -> Iterator[Finding]:
    deep = model_tier(view) == "deep"
    places = placements(view)
    for pol in policies(view).values():
        if deep and pol.role == "cpu-only" and not pol.is_baseline:
            yield RULE.finding(
                f"policy {pol.policy_id} runs a deep-tier model on the bare CPU "
                f"({pol.compute_units}); only the lite model may",
                artifact="manifest.json",
                pointer="/policies",
                observed=pol.compute_units,
                expected="an NPU or GPU provider",
                subject=policy_subject(pol.policy_id),
            )
        p = places.get(pol.policy_id)
        if (
            pol.role != "accelerator"
            or not is_windows_ml(view, pol.policy_id)
            or p is None
            or p.problem == "no placement file could be read"
        ):
            continue  # the explicit CPU session is the comparison, not a candidate
        if not p.session_recorded:
            if pol.runtime.lower() in WINDOWS_ML_RUNTIMES:
                yield RULE.finding(
                    f"Windows ML policy {pol.policy_id}: its placement evidence "
                    f"{p.used} records no compiled session (the execution "
                    "provider and device assigned after compilation)",
                    artifact=p.used,
                    observed=p.tool,
                    expected="a Windows ML record of the session",
                    missing_evidence=True,
                    subject=policy_subject(pol.policy_id),
                )
            continue
        if p.fallback:
            yield RULE.finding(
                f"Windows ML policy {pol.policy_id}: {p.fallback}",
                artifact=p.used,
                pointer="/compilation",
                observed=p.fallback,
                expected="compiled for the assigned device",
                subject=policy_subject(pol.policy_id),
            )
        elif deep and not p.compiled_aot:
            yield RULE.finding(
                f"Windows ML policy {pol.policy_id}: its record of a deep-tier "
                "model's session shows no successful ahead-of-time compilation: "
                "the provider and device it names are not the ones the compiled "
                "model runs on",
                artifact=p.used,
                pointer="/compilation",
                observed="not compiled ahead of time",
                expected="compilation.aot true, succeeded true",
                subject=policy_subject(pol.policy_id),
            )
        first = p.assigned[0] if p.assigned else {}
        ep, device = str(first.get("execution_provider")), str(first.get("device_type"))
        declared = (
            ""
            if pol.runtime.lower() in WINDOWS_ML_RUNTIMES
            else f" (declared as runtime {pol.runtime!r} {pol.compute_units!r}: its "
            "evidence is a Windows ML session)"
        )
        if deep and device not in DEEP_PROVIDERS.get(ep.lower(), set()):
            yield RULE.finding(
                f"Windows ML policy {pol.policy_id}{declared} was assigned {ep} "
                f"on {device} for a deep-tier model: not an allowed NPU/GPU "
                "provider (bare CPU is valid only for lite)",
                artifact=p.used,
                pointer="/assigned/0",
                observed=f"{ep} ({device})",
                expected="QNN NPU, OpenVINO NPU/GPU, NvTensorRT-RTX, MIGraphX",
                subject=policy_subject(pol.policy_id),
            )


RULE = check
