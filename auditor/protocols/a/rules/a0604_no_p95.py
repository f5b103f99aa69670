"""A0604: no p95 (or other tail percentile) is claimed from five passes.

What it checks: the CSV's `notes` and the manifest's `notes` for a p95, p99 or "95th
percentile" figure.
Why it matters: A6.3: summaries give the median and the min-max range; five observations do
not support a 95th percentile, so a p95 claimed from them is invented precision.
Example: a note "p95 = 1.12 s over the warm passes".
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.derive import note_sources
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_P95 = re.compile(r"\bp\s?9[05]\b|\bp\s?99\b|9[05](th)?[\s-]*percentile|percentile\s*9[05]",
                  re.IGNORECASE)


@rule(code="A0604", title="no p95 from five passes", protocol_ref="A6.3", severity="error",
      requires=("manifest",),
      fix=("Report the median and the min-max range; drop the p95 (five passes cannot support "
           "it)."))
def check(view: RunView) -> Iterator[Finding]:
    for artifact, loc, text, _ in note_sources(view):
        m = _P95.search(text)
        if m:
            yield RULE.finding(f"a tail percentile ({m.group()!r}) is claimed; five passes "
                               "support a median and a min-max range only",
                               artifact=artifact, **loc, observed=text[:200],
                               expected="median and min-max")


RULE = check
