"""B0110: the policies ran with the intra-op threads the configuration declares.

What it checks: where the manifest declares `threads` (`torch_intra_op`, and
`onnxruntime_intra_op` for ONNX Runtime policies), environment.json's `torch_threads` (the
process that ran the torch policies) and every ONNX Runtime placement record's
`session_options.intra_op_num_threads` (the session that ran the trials, as ORT reports it)
equal it. A run that declares no threads, or a record that reports none, is not judged here.
Reads: manifest `/threads`; environment `/torch_threads`; placement records
(`ort-placement/1`) `/session_options/intra_op_num_threads`.
Why it matters: B1 records the runtime compute policy; on a CPU the thread count decides the
latency and the power as much as the policy does, and a CPU baseline run on other threads
than declared is not the baseline B7 compares with.
Example: the manifest declares 1 ONNX Runtime thread; ort-cpu's session ran with 4.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import ENVIRONMENT, MANIFEST
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.protocols.machine import THREAD_KEYS, ThreadsSeen, threads_differ
from auditor.rule import rule


@rule(
    code="B0110",
    title="threads as declared",
    protocol_ref="B1",
    severity="error",
    requires=("manifest", "environment"),
    fix=(
        "Declare the threads in the config ([threads] torch, onnxruntime) and run every "
        "policy with them (torch.set_num_threads, SessionOptions.intra_op_num_threads)."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    env = view.environment or {}
    seen = [ThreadsSeen("torch", ENVIRONMENT, "/torch_threads", env.get("torch_threads"))]
    policy_of: dict[str, str] = {}
    for pid, files in sorted(view.placement.items()):
        for ev in files:
            opts = ev.meta.get("session_options")
            if ev.meta.get("format") == "ort-placement/1" and isinstance(opts, dict):
                seen.append(
                    ThreadsSeen(
                        "onnxruntime",
                        ev.path,
                        "/session_options/intra_op_num_threads",
                        opts.get("intra_op_num_threads"),
                    )
                )
                policy_of[ev.path] = pid
    for d in threads_differ(view.manifest, seen):
        s = d.seen
        pid = policy_of.get(s.artifact)
        yield RULE.finding(
            f"{'policy ' + pid + ' ran' if pid else s.artifact + ' observed'} {s.observed} "
            f"{s.runtime} intra-op thread(s); the manifest declares {d.declared}",
            artifact=s.artifact,
            pointer=s.pointer,
            observed=s.observed,
            expected=d.declared,
            subject=policy_subject(pid) if pid else None,
            evidence={"manifest": MANIFEST, "pointer": f"/threads/{THREAD_KEYS[s.runtime]}"},
        )


RULE = check
