"""A0202: no output ID outside the expected list.

What it checks: per output file, IDs that are not in `corpus/expected_ids.txt` (compared
byte for byte; one that differs from an expected ID only by Unicode normalisation or
surrounding whitespace is named as such). An error when the row claims `ids_match` or
`corpus_accepted`, a warning when it declares the pass incomplete.
Reads: every output line's `id`; `corpus/expected_ids.txt`; CSV `ids_match`,
`corpus_accepted`.
Why it matters: A2.2: an extra answer means the pass classified something else than the
corpus (another split, a stale file); its quality figure is not about the corpus.
Example: `outputs/batch-1/warm-1.jsonl` answers `tu-00012`, a tuning ID.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.facts.claims import with_claims
from auditor.protocols.a.facts.ids import lookalikes
from auditor.protocols.a.facts.passes import pass_stats
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0202",
    title="no extra output ID",
    protocol_ref="A2.2",
    severity="error",
    requires=("outputs", "expected_ids", "manifest"),
    fix=(
        "Classify only the expected IDs: check the input file and split, then re-run the variant."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    stats = pass_stats(view).filter(pl.col("n_extra") > 0)
    for s, claimed in with_claims(view, stats, "ids_match", "corpus_accepted"):
        twins = lookalikes(view, list(s["extra_ids"]))
        hint = (
            ""
            if not twins
            else (
                f"; {len(twins)} of them differ from an expected ID only by Unicode normalisation "
                f"or surrounding whitespace (e.g. {next(iter(twins))!r} for "
                f"{next(iter(twins.values()))!r})"
            )
        )
        yield RULE.finding(
            f"{s['n_extra']} output ID(s) are not in the expected list{hint}"
            + ("" if claimed else " (declared by the row: not accepted)"),
            artifact=s["file"],
            line=s["extra_line"],
            severity="error" if claimed else "warning",
            observed=s["extra_ids"],
            expected="only expected IDs",
            evidence={"count": s["n_extra"], **({"lookalikes": twins} if twins else {})},
        )


RULE = check
