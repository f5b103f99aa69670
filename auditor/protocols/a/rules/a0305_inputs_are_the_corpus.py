"""A0305: the evaluation inputs every pass read are exactly the expected IDs, in order.

What it checks: the inputs file the manifest names (`corpus.inputs_file`, usually
`corpus/eval-inputs.jsonl`) holds one text per expected ID of `corpus/expected_ids.txt`,
each once, no other, in the same order.
Reads: the inputs file's `id` per line; `corpus/expected_ids.txt`.
Why it matters: A3.1: every variant reads the same corpus in the same order; an inputs file
with a missing, extra, repeated or reordered text means the passes did not classify the
corpus the outputs are judged against (A9.4: the unit of work is fixed).
Example: `corpus/eval-inputs.jsonl` lists 999 texts (one expected ID absent), or lists the
IDs sorted by length.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import EXPECTED
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0305",
    title="inputs are the expected corpus",
    protocol_ref="A3.1",
    severity="error",
    requires=("expected_ids",),
)
def check(view: RunView) -> Iterator[Finding]:
    if view.inputs is None:
        return  # no inputs file (A0006 reports one the manifest names but is absent)
    rel, got, want = view.inputs_path, view.inputs, view.expected_ids
    missing = want.join(got, on="id", how="anti")["id"]
    extra = got.join(want, on="id", how="anti")
    repeated = got.filter(pl.col("id").is_duplicated()).filter(
        pl.col("line") > pl.col("line").min().over("id")
    )
    if missing.len():
        yield RULE.finding(
            f"{missing.len()} expected ID(s) have no input text",
            artifact=rel,
            observed=missing.head(20).to_list(),
            expected=f"every ID of {EXPECTED}",
            evidence={"count": missing.len()},
        )
    if extra.height:
        yield RULE.finding(
            f"{extra.height} input text(s) are not in the expected list",
            artifact=rel,
            line=extra["line"][0],
            observed=extra["id"].head(20).to_list(),
            expected="only expected IDs",
            evidence={"count": extra.height},
        )
    if repeated.height:
        yield RULE.finding(
            f"{repeated.height} input text(s) are listed more than once",
            artifact=rel,
            line=repeated["line"][0],
            observed=repeated["id"].head(20).to_list(),
            expected="each once",
        )
    if missing.len() or extra.height or repeated.height:
        return
    order = (
        got.select("line", "id")
        .with_row_index("pos")
        .join(want.select("id").with_row_index("pos"), on="pos", how="left", suffix="_want")
        .filter(pl.col("id") != pl.col("id_want"))
    )
    if order.height:
        first = order.row(0, named=True)
        yield RULE.finding(
            f"the inputs are in another order than {EXPECTED} ({order.height} position(s))",
            artifact=rel,
            line=first["line"],
            observed=first["id"],
            expected=first["id_want"],
        )


RULE = check
