"""A1002: a configuration that is not accepted is never ranked with accepted ones.

What it checks: for each variant with no pass the auditor recomputes as accepted, no note
(its rows' notes, or manifest notes naming it) ranks it: "fastest", "best", "winner",
"rank", "recommended", "cheapest", "#1".
Why it matters: A10.2: a faster configuration that is not accepted does not meet the same
goal; ranking it against accepted ones compares speed on different work.
Example: `batch-32` fails the quality rule and a note says "batch-32 is the fastest".
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.derive import note_sources, variant_accepted
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_RANKING = re.compile(r"\b(fastest|quickest|best|winner|wins|rank\w*|recommend\w*|cheapest"
                      r"|top)\b|#\s?1\b", re.IGNORECASE)


@rule(code="A1002", title="no ranking of unaccepted configurations", protocol_ref="A10.2",
      severity="error", requires=("results", "outputs", "expected_ids", "manifest"),
      fix="Rank only accepted configurations; list the others apart.")
def check(view: RunView) -> Iterator[Finding]:
    rejected = set(variant_accepted(view).filter(pl.col("accepted_corpora") == 0)["variant_id"])
    if not rejected:
        return
    for artifact, loc, text, variant in note_sources(view):
        named = [v for v in sorted(rejected) if v == variant or (variant is None and v in text)]
        m = _RANKING.search(text)
        if named and m:
            yield RULE.finding(f"variant {named[0]} is not accepted but the notes rank it "
                               f"({m.group()!r})", artifact=artifact, **loc,
                               observed=text[:200], expected="no ranking of a variant that "
                               "is not accepted", variant=named[0])


RULE = check
