"""A0201: in every output file each expected ID appears exactly once.

What it checks: per output file, the set of IDs against `corpus/expected_ids.txt` (polars
anti-join and group counts, not line counts): missing IDs and duplicated IDs. An error when
the pass's row claims `ids_match` or `corpus_accepted`; a warning when the row honestly
declares the pass incomplete (a failed pass keeps its partial output, A6.4).
Reads: every output line's `id`; `corpus/expected_ids.txt`; CSV `ids_match`,
`corpus_accepted`.
Why it matters: A2.1: a corpus is accepted only if every expected ID is answered exactly once.
Two files of 1,000 lines prove nothing (A2.5): one duplicate hides one missing answer.
Example: `outputs/batch-4/warm-2.jsonl` has 1,000 lines but `ev-000017` twice and
`ev-000342` never, while its row says `ids_match` true.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding, Severity
from auditor.protocols.a.facts.claims import with_claims
from auditor.protocols.a.facts.passes import pass_stats
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0201",
    title="each expected ID exactly once",
    protocol_ref="A2.1",
    severity="error",
    requires=("outputs", "expected_ids", "manifest"),
    fix=(
        "Find why the pass repeated or skipped IDs (a retried batch, a dropped one), fix the "
        "pipeline and re-run the variant."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    stats = pass_stats(view).filter((pl.col("n_missing") > 0) | (pl.col("n_dup") > 0))
    for s, claimed in with_claims(view, stats, "ids_match", "corpus_accepted"):
        sev: Severity = "error" if claimed else "warning"
        tail = "" if claimed else " (declared by the row: not accepted)"
        if s["n_missing"]:
            yield RULE.finding(
                f"{s['n_missing']} expected ID(s) missing from the output{tail}",
                artifact=s["file"],
                severity=sev,
                observed=s["missing_ids"],
                expected="every expected ID once",
                evidence={"count": s["n_missing"]},
            )
        if s["n_dup"]:
            yield RULE.finding(
                f"{s['n_dup']} ID(s) answered more than once{tail}",
                artifact=s["file"],
                line=s["dup_line"],
                severity=sev,
                observed=s["dup_ids"],
                expected="each ID once",
                evidence={"count": s["n_dup"]},
            )


RULE = check
