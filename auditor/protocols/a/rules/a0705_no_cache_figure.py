"""A0705: no "cache" figure computed as peak reserved minus peak allocated.

What it checks: notes that mention a cache with a number equal to `peak_reserved_bytes -
peak_allocated_bytes` of the pass (the exact byte count, or a figure with its unit, MiB,
GB..., at the precision written), and trace figures named like a cache (`other_sources`
names, fields outside the schema) with that value.
Why it matters: A7.4: the two peaks may happen at different instants, so their difference is
not the cache at any instant; a "cache" figure built that way is invented.
Example: a note "allocator cache 40 MiB" where 40 MiB is exactly peak reserved - peak
allocated.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.rules._memory import matches, note_targets, trace_figures_equal_to
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_CACHE = re.compile(r"cach", re.IGNORECASE)


def _diff(d: dict) -> list[int]:
    a, r = d.get("peak_allocated_bytes"), d.get("peak_reserved_bytes")
    return [r - a] if a is not None and r is not None and r > a else []


@rule(code="A0705", title="no cache = peak reserved - peak allocated", protocol_ref="A7.4",
      severity="error", requires=("results",),
      fix="Drop the cache figure: the two peaks are not at the same instant.")
def check(view: RunView) -> Iterator[Finding]:
    for artifact, loc, text, targets in note_targets(view, _diff):
        if _CACHE.search(text) and (hit := matches(text, targets)) is not None:
            yield RULE.finding("a cache figure in the notes is peak reserved - peak allocated",
                               artifact=artifact, **loc, observed=hit,
                               expected="no cache figure from two peaks")
    for trace, where, value in trace_figures_equal_to(view, _diff, name_pattern=_CACHE):
        yield RULE.finding("a cache figure is peak reserved - peak allocated", artifact=trace,
                           pointer=where, observed=value,
                           expected="no cache figure from two peaks")


RULE = check
