"""A0303: every variant processed the inputs in the same order.

What it checks: among output files whose ID set is complete, the sequence of IDs (first
occurrence of each) is the same in every file; it is compared with the first such file.
Reads: every output line's `id`, in file order; `corpus/expected_ids.txt`.
Why it matters: A3.1 keeps the input order fixed between variants: sorting inputs by length
for one batch size changes padding and therefore the work measured.
Example: `outputs/batch-8/warm-1.jsonl` lists the IDs sorted by text length while
`outputs/batch-1/warm-1.jsonl` follows `corpus/expected_ids.txt`.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.facts.passes import expected_index, indexed_outputs, pass_stats
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0303",
    title="same input order in every variant",
    protocol_ref="A3.1",
    severity="error",
    requires=("outputs", "expected_ids", "manifest"),
    fix="Feed every variant the same input order (the expected-ID list order) and re-run.",
)
def check(view: RunView) -> Iterator[Finding]:
    complete = pass_stats(view).filter(pl.col("ids_match")).sort("file")
    if complete.height < 2:
        return
    ref_file = complete["file"][0]
    exp_ids = expected_index(view)["id"]
    if (complete["lines"] == exp_ids.len()).all() and complete["order_diffs"][0] == 0:
        # Every complete file has one line per expected ID and no other line, and the first
        # follows the list: a line differs from it where its ID is not the list's ID at that
        # line, which pass_stats has already counted in its grouped pass.
        diff = (
            complete.slice(1)
            .filter(pl.col("order_diffs") > 0)
            .select(
                "file",
                "order_first_line",
                "order_first_id",
                pl.lit(exp_ids).gather(pl.col("order_first_line") - 1).alias("ref_id"),
                "order_diffs",
            )
        )
    else:
        # In a complete file every line with an ID has a distinct expected ID: compare the
        # expected-ID positions line by line with the first complete file's.
        seq = (
            indexed_outputs(view)
            .filter(pl.col("file").is_in(complete["file"].implode()) & pl.col("exp").is_not_null())
            .select("file", "line", "id", "exp", pl.int_range(pl.len()).over("file").alias("pos"))
        )
        # The view holds the lines of the files with a fault only: a file it does not hold
        # is clean, the expected list itself in order.
        held = set(seq["file"].unique().to_list())
        listed = expected_index(view).select(
            pl.col("exp").alias("pos"), "exp", "id", (pl.col("exp") + 1).alias("line")
        )
        ref = (seq.filter(pl.col("file") == ref_file) if ref_file in held else listed).select(
            "pos", pl.col("exp").alias("ref_exp"), pl.col("id").alias("ref_id")
        )

        def differ(lines: pl.DataFrame) -> pl.DataFrame:
            return (
                lines.join(ref, on="pos", how="left")
                .filter(pl.col("exp") != pl.col("ref_exp"))
                .group_by("file")
                .agg(
                    pl.col("line").first(),
                    pl.col("id").first(),
                    pl.col("ref_id").first(),
                    pl.len().alias("n"),
                )
            )

        clean = [f for f in complete["file"] if f not in held and f != ref_file]
        parts = [differ(seq.filter(pl.col("file") != ref_file))]
        if clean and ref_file in held:  # each clean file differs from it the same way
            one = differ(listed.with_columns(pl.lit("").alias("file"))).drop("file")
            parts.append(pl.DataFrame({"file": clean}).join(one, how="cross"))
        diff = pl.concat(parts).sort("file")
    for f, line, got, want, n in diff.iter_rows():
        yield RULE.finding(
            f"input order differs from {ref_file} ({n} position(s))",
            artifact=f,
            line=line,
            observed=got,
            expected=want,
        )


RULE = check
