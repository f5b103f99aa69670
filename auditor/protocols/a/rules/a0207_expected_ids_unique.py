"""A0207: `corpus/expected_ids.txt` lists each evaluation ID once, none empty.

What it checks: duplicate and empty lines in the expected ID list itself.
Why it matters: A2.1 and A2.5 compare outputs against this list; a duplicate in it makes
"each expected ID exactly once" unsatisfiable or hides a short corpus (999 distinct IDs
counted as 1,000).
Example: `ev-000010` on lines 11 and 12 of `corpus/expected_ids.txt`.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import EXPECTED
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(code="A0207", title="expected IDs unique", protocol_ref="A2.1", severity="error",
      requires=("expected_ids",),
      fix=("Remove the duplicated IDs from the expected list (or give them unique IDs) and "
           "re-run."))
def check(view: RunView) -> Iterator[Finding]:
    e = view.expected_ids
    for line in e.filter(pl.col("id").str.strip_chars() == "")["line"].head(20):
        yield RULE.finding("empty line in the expected ID list", artifact=EXPECTED,
                           line=line, observed="", expected="an ID")
    dup = e.filter(pl.col("id").is_duplicated() & (pl.col("id") != "")).filter(
        pl.col("line") > pl.col("line").min().over("id"))
    for line, i in dup.select("line", "id").head(20).iter_rows():
        yield RULE.finding(f"{i} is listed more than once", artifact=EXPECTED,
                           line=line, observed=i, expected="each ID once")


RULE = check
