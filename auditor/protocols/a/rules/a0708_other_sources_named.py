"""A0708: figures outside PyTorch's allocator come from another, named source.

What it checks: each `other_sources` entry of a memory trace names a source that is not the
PyTorch caching allocator (`torch.cuda.memory_*`, `max_memory_*`, `memory_stats`).
Reads: memory traces `other_sources` (`name`, `source`).
Why it matters: A7.5: the allocator does not see other processes or allocations outside it; a
figure that claims to include them (process RSS, device total, NVML used memory) must come
from the tool that measured it, named, not be relabelled allocator output.
Example: `{"name": "gpu_total_used", "value": 9.1e9, "source": "torch.cuda.memory_reserved"}`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_ALLOCATOR = re.compile(
    r"torch\.cuda|memory_allocated|memory_reserved|max_memory|memory_stats", re.IGNORECASE
)


@rule(
    code="A0708",
    title="other memory sources named",
    protocol_ref="A7.5",
    severity="error",
    requires=("memory_traces",),
    fix=("Name the source of any figure from outside the allocator (RSS, NVML) and keep it apart."),
)
def check(view: RunView) -> Iterator[Finding]:
    for key in sorted(view.memory_traces):
        for n, src in enumerate(view.memory_traces[key].get("other_sources") or []):
            source = str(src.get("source", ""))
            if not source.strip() or _ALLOCATOR.search(source):
                yield RULE.finding(
                    f"figure {src.get('name')!r} outside the allocator is "
                    "attributed to the allocator or to no source",
                    artifact=view.memory_trace_files[key],
                    pointer=f"/other_sources/{n}/source",
                    observed=source,
                    expected="another named source (NVML, getrusage, ...)",
                )


RULE = check
