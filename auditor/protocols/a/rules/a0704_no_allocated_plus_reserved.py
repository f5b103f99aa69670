"""A0704: no memory figure adds `allocated` and `reserved`.

What it checks: the typed memory figures a run states: `claims.json` `memory_figures` (in
their unit, at the precision written) and the extra figures of memory traces
(`other_sources`, fields outside the schema); none may equal an allocated figure plus a
reserved one of its pass (baseline or peak, mixed too; of any pass when the figure names
none). An error comes only from those typed fields; a note whose wording adds allocated and
reserved, or whose number equals such a sum, gets a warning quoting the sentence.
Reads: claims `/memory_figures` (`name`, `value`, `unit`, `variant_id`, `phase`,
`run_index`); memory traces (the four A7 figures, `other_sources`, fields outside the
schema); CSV memory cells; notes (CSV `notes`, manifest `/notes`) for the warning only.
Why it matters: A7.3: `allocated` is included in `reserved`; their sum counts part of the
memory twice and is not the memory of anything.
Example: `{"name": "gpu_memory_used", "value": 3.4, "unit": "GB"}` where 3.4 GB is peak
allocated + peak reserved of the pass; or a trace field `"total_bytes": 4026531840`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.facts.notes import sentence_at
from auditor.protocols.a.rules._memory import (
    claimed_figures,
    equals_figure,
    note_targets,
    quote_match,
    trace_figures_equal_to,
)
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_WORDING = re.compile(
    r"alloc\w*\s*(\+|plus)\s*reserv\w*|reserv\w*\s*(\+|plus)\s*alloc\w*"
    r"|sum of (the )?alloc\w* and reserv\w*",
    re.IGNORECASE,
)
_MEMORY = re.compile(r"alloc|reserv|memory|\bmem\b|vram", re.IGNORECASE)


def _sums(d: dict) -> list[int]:
    """Every allocated figure plus every reserved one, a baseline and a peak mixed too
    (`baseline_allocated_bytes + peak_reserved_bytes` counts memory twice all the same)."""
    out = []
    for a in ("baseline_allocated_bytes", "peak_allocated_bytes"):
        for r in ("baseline_reserved_bytes", "peak_reserved_bytes"):
            if d.get(a) and d.get(r):
                out.append(d[a] + d[r])
    return out


@rule(
    code="A0704",
    title="no allocated + reserved figure",
    protocol_ref="A7.3",
    severity="error",
    requires=("results",),
    fix="Report allocated and reserved apart; never add them.",
)
def check(view: RunView) -> Iterator[Finding]:
    for artifact, where, fig, targets in claimed_figures(view, _sums):
        if targets and equals_figure(fig["value"], fig["unit"], targets):
            yield RULE.finding(
                f"memory figure {fig['name']!r} equals allocated + reserved",
                artifact=artifact,
                pointer=where,
                observed=f"{fig['value']} {fig['unit']}",
                expected="allocated and reserved reported separately",
            )
    for trace, where, value in trace_figures_equal_to(view, _sums):
        yield RULE.finding(
            "a trace figure equals allocated + reserved",
            artifact=trace,
            pointer=where,
            observed=value,
            expected="no summed figure",
        )
    for artifact, loc, text, targets in note_targets(view, _sums):
        m = _WORDING.search(text)
        quoted = (
            sentence_at(text, m.start())
            if m
            else quote_match(text, targets)
            if _MEMORY.search(text)
            else None
        )
        if quoted is not None:
            yield RULE.finding(
                "a note may add allocated and reserved memory (notes are not "
                "judged: state memory figures in claims.json)",
                artifact=artifact,
                **loc,
                severity="warning",
                observed=quoted,
                expected="allocated and reserved reported separately",
            )


RULE = check
