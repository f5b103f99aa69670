"""A0207: `corpus/expected_ids.txt` lists each evaluation ID once, none empty, none that only
looks like another.

What it checks: duplicate and empty lines in the expected ID list itself; IDs with
surrounding whitespace; distinct IDs that become the same once normalised as a reader takes
them (`facts.ids.normalized_id`: NFKC, invisible characters removed, trimmed): `café` written
precomposed and decomposed, `ev-1` and `ev-1 `, `ev-1` with a zero-width space or a BOM;
and IDs that differ only by case when the evaluation inputs give them the same text (many
corpora use case for distinct items, `typing:Final` and `typing:final`: those stay
accepted; without the inputs file, a warning).
Reads: `corpus/expected_ids.txt` (every line); the evaluation inputs' `id` and `text`, for
IDs that differ only by case.
Why it matters: A2.1 and A2.5 compare outputs against this list; a duplicate in it makes
"each expected ID exactly once" unsatisfiable or hides a short corpus (999 distinct IDs
counted as 1,000), and two IDs a reader cannot tell apart let one text count twice.
Example: `ev-000010` on lines 11 and 12 of `corpus/expected_ids.txt`; or `ev-000010 ` (a
trailing space) beside `ev-000010`.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import EXPECTED
from auditor.protocols.a.facts.ids import casefolded_id, normalized_id
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0207",
    title="expected IDs unique",
    protocol_ref="A2.1",
    severity="error",
    requires=("expected_ids",),
    fix=("Remove the duplicated IDs from the expected list (or give them unique IDs) and re-run."),
)
def check(view: RunView) -> Iterator[Finding]:
    e = view.expected_ids
    for line in e.filter(pl.col("id").str.strip_chars() == "")["line"].head(20):
        yield RULE.finding(
            "empty line in the expected ID list",
            artifact=EXPECTED,
            line=line,
            observed="",
            expected="an ID",
        )
    dup = e.filter(pl.col("id").is_duplicated() & (pl.col("id") != "")).filter(
        pl.col("line") > pl.col("line").min().over("id")
    )
    for line, i in dup.select("line", "id").head(20).iter_rows():
        yield RULE.finding(
            f"{i} is listed more than once",
            artifact=EXPECTED,
            line=line,
            observed=i,
            expected="each ID once",
        )
    padded = e.filter(
        (pl.col("id") != pl.col("id").str.strip_chars()) & (pl.col("id").str.strip_chars() != "")
    )
    for line, i in padded.select("line", "id").head(20).iter_rows():
        yield RULE.finding(
            f"{i!r} has surrounding whitespace: an ID a reader cannot tell from the trimmed one",
            artifact=EXPECTED,
            line=line,
            observed=i,
            expected=i.strip(),
        )
    # Distinct IDs (exact duplicates are reported above) that normalise to the same text.
    keyed = e.unique("id", keep="first").with_columns(
        normalized_id().alias("key"), casefolded_id().alias("folded")
    )
    keyed = keyed.filter((pl.col("key") != "") & (pl.col("id") == pl.col("id").str.strip_chars()))
    twins = keyed.filter(pl.col("key").is_duplicated()).filter(
        pl.col("line") > pl.col("line").min().over("key")
    )
    for line, i, key in twins.select("line", "id", "key").head(20).iter_rows():
        first = keyed.filter(pl.col("key") == key).sort("line")["id"][0]
        yield RULE.finding(
            f"{i!r} differs from {first!r} only by Unicode normalisation or invisible characters",
            artifact=EXPECTED,
            line=line,
            observed=i,
            expected="IDs that differ as text a reader sees",
            evidence={"same_as": first},
        )
    # Distinct under normalisation, equal once case-folded: one text twice, or two items?
    cased = keyed.unique("key", keep="first").filter(pl.col("folded").is_duplicated()).sort("line")
    if cased.height == 0:
        return
    inputs = view.inputs if "inputs" in view.available else None
    if inputs is not None:
        cased = cased.join(
            inputs.unique("id", keep="first").select("id", "text"), on="id", how="left"
        )
    else:
        cased = cased.with_columns(pl.lit(None, dtype=pl.String).alias("text"))
    for group in cased.partition_by("folded", maintain_order=True)[:20]:
        first = group.row(0, named=True)
        for other in group.slice(1).iter_rows(named=True):
            if inputs is None:
                yield RULE.finding(
                    f"{other['id']!r} differs from {first['id']!r} only by "
                    "case, and no inputs file says whether they are one text",
                    artifact=EXPECTED,
                    line=other["line"],
                    severity="warning",
                    observed=other["id"],
                    expected="IDs that differ as text a reader sees",
                    evidence={"same_as": first["id"]},
                )
            elif other["text"] is not None and other["text"] == first["text"]:
                yield RULE.finding(
                    f"{other['id']!r} differs from {first['id']!r} only by case "
                    "and the inputs give both the same text: one text counted "
                    "twice",
                    artifact=EXPECTED,
                    line=other["line"],
                    observed=other["id"],
                    expected="each text under one ID",
                    evidence={"same_as": first["id"], "inputs": view.inputs_path},
                )


RULE = check
