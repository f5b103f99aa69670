"""A0406: the passes ran with the intra-op threads the configuration declares.

What it checks: where the manifest declares `threads.torch_intra_op` (the config's
`[threads] torch`, or the workload's default, recorded before measuring), every timeline
entry's `torch_threads` (read by the process that ran it, a cold pass's fresh process
included) and environment.json's `torch_threads` equal it. A run that declares no threads,
or an entry that records none, is not judged here.
Reads: manifest `/threads/torch_intra_op`; timeline `torch_threads`; environment
`/torch_threads`.
Why it matters: A3.1/A4.1: on a CPU the thread count decides the time as much as the batch
does (a 2-layer BERT: 5.4 ms a text on one thread, 151 ms on two while another process held
the second core); a variant measured with other threads than declared is not the announced
configuration.
Example: the manifest declares 1 torch thread; batch-8 cold-1's process ran with 4.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import ENVIRONMENT, MANIFEST, TIMELINE
from auditor.protocols.a.subject import variant_subject
from auditor.protocols.a.view import RunView
from auditor.protocols.machine import ThreadsSeen, threads_differ
from auditor.rule import rule


@rule(
    code="A0406",
    title="threads as declared",
    protocol_ref="A4.1",
    severity="error",
    requires=("manifest", "timeline", "environment"),
    fix=(
        "Declare the threads in the config ([threads] torch) and run every pass with "
        "them (torch.set_num_threads in each process that measures)."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    env = view.environment or {}
    seen = [ThreadsSeen("torch", ENVIRONMENT, "/torch_threads", env.get("torch_threads"))]
    tl = view.timeline
    if tl is not None and "torch_threads" in tl.columns:
        rows = tl.filter(tl["torch_threads"].is_not_null()).select(
            "line", "variant_id", "phase", "run_index", "torch_threads"
        )
        seen += [
            ThreadsSeen("torch", TIMELINE, f"{line}|{v}|{ph}|{n}", t)
            for line, v, ph, n, t in rows.iter_rows()
        ]
    for d in threads_differ(view.manifest, seen):
        s = d.seen
        if s.artifact == TIMELINE:
            line, v, ph, n = s.pointer.split("|")
            yield RULE.finding(
                f"{v} {ph}-{n} ran with {s.observed} torch thread(s); the manifest declares "
                f"{d.declared}",
                artifact=TIMELINE,
                line=int(line),
                observed=s.observed,
                expected=d.declared,
                subject=variant_subject(v),
                evidence={"manifest": MANIFEST, "pointer": "/threads/torch_intra_op"},
            )
        else:
            yield RULE.finding(
                f"{ENVIRONMENT} observed {s.observed} torch thread(s); the manifest declares "
                f"{d.declared}",
                artifact=ENVIRONMENT,
                pointer=s.pointer,
                observed=s.observed,
                expected=d.declared,
                evidence={"manifest": MANIFEST, "pointer": "/threads/torch_intra_op"},
            )


RULE = check
