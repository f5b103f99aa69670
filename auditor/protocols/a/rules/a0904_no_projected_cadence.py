"""A0904: no cadence is projected, and no cost per accepted corpus without an accepted count.

What it checks: the notes (CSV and manifest) for a projected production rate ("per day",
"/week", "per month", "cadence", "projected", "extrapolated", "corpora in 30 days"), and
for a cost "per accepted corpus" in the notes of a variant with no accepted corpus.
Why it matters: A9.5: without a measured, accepted quantity only the package cost is
computed; extrapolating a measured pass to 3, 7 or 30 days of production invents output that
was never run or validated.
Example: a note "at this speed 12,000 corpora per week".
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.derive import note_sources
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_CADENCE = re.compile(
    r"\b(per|a|/)\s*(day|week|month|hour)\b|/\s*(day|week|month|h)\b|\bcadence\b|\bproject(ed|ion)"
    r"|\bextrapolat\w*|\bin\s+(3|7|30)\s+days\b|\bthroughput of \d+ corpora", re.IGNORECASE)
_PER_ACCEPTED = re.compile(r"per accepted corp", re.IGNORECASE)


@rule(code="A0904", title="no projected cadence", protocol_ref="A9.5", severity="error",
      requires=("manifest",),
      fix="Give only the package cost without a measured accepted count; project no cadence.")
def check(view: RunView) -> Iterator[Finding]:
    accepted: dict[str, int] = {}
    if view.results is not None:
        for v, n in view.results.group_by("variant_id").agg(
                pl.col("accepted_unique_corpora").max().alias("n")).iter_rows():
            accepted[v] = n or 0
    for artifact, loc, text, variant in note_sources(view):
        m = _CADENCE.search(text)
        if m:
            yield RULE.finding(f"the notes project a cadence ({m.group()!r})", artifact=artifact,
                               **loc, observed=text[:200],
                               expected="the package cost, and per accepted corpus only if "
                                        "measured")
        elif variant is not None and _PER_ACCEPTED.search(text) and not accepted.get(variant):
            yield RULE.finding("a cost per accepted corpus for a variant with no accepted corpus",
                               artifact=artifact, **loc, observed=text[:200],
                               expected="the package cost only")


RULE = check
