"""A0705: no "cache" figure computed as peak reserved minus peak allocated.

What it checks: the typed memory figures a run states: `claims.json` `memory_figures` (in
their unit, at the precision written) and trace figures named like a cache
(`other_sources` names, fields outside the schema); none may equal `peak_reserved_bytes -
peak_allocated_bytes` of its pass (of any pass when the figure names none). A note that
mentions a cache with such a number gets a warning quoting the sentence, never an error.
Reads: claims `/memory_figures` (`name`, `value`, `unit`, `variant_id`, `phase`,
`run_index`); memory traces (peaks, `other_sources`, fields outside the schema); CSV peak
cells; notes (CSV `notes`, manifest `/notes`) for the warning only.
Why it matters: A7.4: the two peaks may happen at different instants, so their difference is
not the cache at any instant; a "cache" figure built that way is invented.
Example: `{"name": "allocator_cache", "value": 40, "unit": "MiB"}` where 40 MiB is exactly
peak reserved - peak allocated.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.rules._memory import (
    claimed_figures,
    equals_figure,
    note_targets,
    quote_match,
    trace_figures_equal_to,
)
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_CACHE = re.compile(r"cach", re.IGNORECASE)


def _diff(d: dict) -> list[int]:
    a, r = d.get("peak_allocated_bytes"), d.get("peak_reserved_bytes")
    return [r - a] if a is not None and r is not None and r > a else []


@rule(
    code="A0705",
    title="no cache = peak reserved - peak allocated",
    protocol_ref="A7.4",
    severity="error",
    requires=("results",),
    fix="Drop the cache figure: the two peaks are not at the same instant.",
)
def check(view: RunView) -> Iterator[Finding]:
    for artifact, where, fig, targets in claimed_figures(view, _diff):
        if targets and equals_figure(fig["value"], fig["unit"], targets):
            yield RULE.finding(
                f"memory figure {fig['name']!r} is peak reserved - peak "
                "allocated, not a measure of anything at one instant",
                artifact=artifact,
                pointer=where,
                observed=f"{fig['value']} {fig['unit']}",
                expected="no figure from two peaks",
            )
    for trace, where, value in trace_figures_equal_to(view, _diff, name_pattern=_CACHE):
        yield RULE.finding(
            "a cache figure is peak reserved - peak allocated",
            artifact=trace,
            pointer=where,
            observed=value,
            expected="no cache figure from two peaks",
        )
    for artifact, loc, text, targets in note_targets(view, _diff):
        if _CACHE.search(text) and (quoted := quote_match(text, targets)) is not None:
            yield RULE.finding(
                "a note may give peak reserved - peak allocated as a cache "
                "(notes are not judged: state memory figures in claims.json)",
                artifact=artifact,
                **loc,
                severity="warning",
                observed=quoted,
                expected="no cache figure from two peaks",
            )


RULE = check
