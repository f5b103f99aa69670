"""B0405: a policy's placement records say what its raw placement evidence says.

What it checks: where a policy has several placement files (our runner's ONNX Runtime
assignment record beside the raw profile it names as `profile_file`, a harness's record
beside a tool's report), they agree: the same fallback or none, the same side of the
policy's floor, and every node both name placed on the same device. Where they disagree,
the raw file decides (the one the record names as its source; else the one less favourable
to residency): the shares and every other placement rule read it, and the disagreement is
this error, naming both files.
Reads: placement/* (every file of the policy: its nodes, names, devices and providers, its
fallback note, `profile_file`); manifest `/policies/*/placement_file`, floors.
Why it matters: B4, and "raw evidence outweighs a record derived from it": an assignment
record edited to put the nodes on CUDA beside a profile that ran every one of them on the
CPU would otherwise decide the verdict, and a silent CPU fallback becomes an accelerator
result.
Example: `placement/ort-cuda.ort.json` assigns 36 nodes to CUDAExecutionProvider; the
profile it names, `placement/ort-cuda.ort-profile.json`, ran all 36 on CPUExecutionProvider.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.placement import placements
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0405",
    title="placement records agree with the raw evidence",
    protocol_ref="B4",
    severity="error",
    requires=("manifest",),
    fix="Write the placement record from the same session as the profile it names, and "
    "keep both as the tools wrote them; never edit one without the other.",
)
def check(view: RunView) -> Iterator[Finding]:
    for pid, p in placements(view).items():
        for d in p.disagreements:
            yield RULE.finding(
                f"policy {pid}: {d.file} and {d.decides} disagree ({d.why}): "
                f"the raw evidence, {d.decides}, decides",
                artifact=d.file,
                observed=d.why,
                expected=f"what {d.decides} says",
                subject=policy_subject(pid),
                evidence={"decides": d.decides},
            )


RULE = check
