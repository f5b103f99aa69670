"""A0704: no figure adds `allocated` and `reserved`.

What it checks: numbers in the notes (CSV `notes` near a memory word, manifest `notes`) and
the extra figures of memory traces (`other_sources`, fields outside the schema) that equal
baseline allocated + baseline reserved or peak allocated + peak reserved of the pass (the
exact byte count, or a figure with its unit, MiB, GB..., at the precision written), and any
"allocated + reserved" wording.
Why it matters: A7.3: `allocated` is included in `reserved`; their sum counts part of the
memory twice and is not the memory of anything.
Example: a note "memory used 3.4 GB (allocated + reserved)", or a trace field
`"total_bytes": 4026531840` equal to peak allocated + peak reserved.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.rules._memory import matches, note_targets, trace_figures_equal_to
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_WORDING = re.compile(r"alloc\w*\s*(\+|plus|and)\s*reserv\w*|reserv\w*\s*(\+|plus)\s*alloc\w*",
                      re.IGNORECASE)
_MEMORY = re.compile(r"alloc|reserv|memory|\bmem\b|vram", re.IGNORECASE)


def _sums(d: dict) -> list[int]:
    out = []
    for a, r in (("baseline_allocated_bytes", "baseline_reserved_bytes"),
                 ("peak_allocated_bytes", "peak_reserved_bytes")):
        if d.get(a) and d.get(r):
            out.append(d[a] + d[r])
    return out


@rule(code="A0704", title="no allocated + reserved figure", protocol_ref="A7.3",
      severity="error", requires=("results",),
      fix="Report allocated and reserved apart; never add them.")
def check(view: RunView) -> Iterator[Finding]:
    for artifact, loc, text, targets in note_targets(view, _sums):
        if _WORDING.search(text):
            yield RULE.finding("the notes add allocated and reserved memory", artifact=artifact,
                               **loc, observed=text[:200],
                               expected="allocated and reserved reported separately")
        elif _MEMORY.search(text) and (hit := matches(text, targets)) is not None:
            yield RULE.finding("a memory figure in the notes equals allocated + reserved",
                               artifact=artifact, **loc, observed=hit,
                               expected="allocated and reserved reported separately")
    for trace, where, value in trace_figures_equal_to(view, _sums):
        yield RULE.finding("a trace figure equals allocated + reserved", artifact=trace,
                           pointer=where, observed=value, expected="no summed figure")


RULE = check
