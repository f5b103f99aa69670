"""A0701: GPU memory was read after synchronizing, with peak statistics reset.

What it checks: every memory trace that measured the allocator (`allocator_measured` true)
records `synchronized` true (torch.cuda.synchronize() before the baseline and after the
pass) and `peak_stats_reset` true (reset_peak_memory_stats() before the pass).
Reads: memory traces `allocator_measured`, `synchronized`, `peak_stats_reset`.
Why it matters: A7.1 and A7.2: without synchronizing, asynchronous kernels still running are
not in the figures; without a reset, the "peak" is the previous pass's.
Example: `traces/memory/batch-4/warm-2.json` with `"peak_stats_reset": false`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0701",
    title="memory read after synchronize and reset",
    protocol_ref="A7.1",
    severity="error",
    requires=("memory_traces",),
    fix=(
        "Synchronize the device before the baseline and after the operation, and reset the "
        "peak statistics."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    for key in sorted(view.memory_traces):
        doc = view.memory_traces[key]
        if not doc["allocator_measured"]:
            continue
        for flag, ref in (("synchronized", "A7.1"), ("peak_stats_reset", "A7.2")):
            if doc.get(flag) is not True:
                yield RULE.finding(
                    f"{flag} is not true for a measured pass",
                    artifact=view.memory_trace_files[key],
                    pointer=f"/{flag}",
                    observed=doc.get(flag),
                    expected=True,
                    protocol_ref=ref,
                )


RULE = check
