"""A0709: the memory figures of a trace agree with the full `memory_stats` it keeps.

What it checks: in every memory trace that measured the allocator (`allocator_measured`
true), each recorded figure equals its counter in the `torch.cuda.memory_stats()` snapshot
taken beside it: `baseline_allocated_bytes` = `memory_stats_before["allocated_bytes.all.
current"]`, `baseline_reserved_bytes` = `...["reserved_bytes.all.current"]`,
`peak_allocated_bytes` = `memory_stats_after["allocated_bytes.all.peak"]`,
`peak_reserved_bytes` = `...["reserved_bytes.all.peak"]` (what `memory_allocated()`,
`memory_reserved()`, `max_memory_allocated()` and `max_memory_reserved()` return). A
recorded figure whose snapshot or counter is absent is missing evidence.
Reads: memory traces `allocator_measured`, the four A7 figures, `memory_stats_before`,
`memory_stats_after`.
Why it matters: A7.2 keeps the baselines and absolute peaks of each phase; the full
statistics are the allocator's own record, so a figure that differs from them was not read
from the allocator at that moment (edited, or taken from another pass).
Example: `peak_allocated_bytes` 2147483648 while `memory_stats_after` says
`"allocated_bytes.all.peak": 1912602624`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.view import RunView
from auditor.rule import rule

COUNTERS = (
    ("baseline_allocated_bytes", "memory_stats_before", "allocated_bytes.all.current"),
    ("baseline_reserved_bytes", "memory_stats_before", "reserved_bytes.all.current"),
    ("peak_allocated_bytes", "memory_stats_after", "allocated_bytes.all.peak"),
    ("peak_reserved_bytes", "memory_stats_after", "reserved_bytes.all.peak"),
)


@rule(
    code="A0709",
    title="memory figures agree with memory_stats",
    protocol_ref="A7.2",
    severity="error",
    requires=("memory_traces",),
)
def check(view: RunView) -> Iterator[Finding]:
    for key in sorted(view.memory_traces):
        doc, rel = view.memory_traces[key], view.memory_trace_files[key]
        if not doc["allocator_measured"]:
            continue
        for figure, snapshot, counter in COUNTERS:
            value = doc.get(figure)
            if value is None:
                continue
            stats = doc.get(snapshot)
            if not isinstance(stats, dict) or counter not in stats:
                yield RULE.finding(
                    f"{figure} is recorded without the {snapshot} counter that backs it",
                    artifact=rel,
                    pointer=f"/{snapshot}",
                    observed=None,
                    expected=f"{counter} = {value}",
                    missing_evidence=True,
                )
            elif stats[counter] != value:
                yield RULE.finding(
                    f"{figure} differs from the allocator's own {counter}",
                    artifact=rel,
                    pointer=f"/{figure}",
                    observed=value,
                    expected=stats[counter],
                    evidence={"counter": f"/{snapshot}/{counter}"},
                )


RULE = check
