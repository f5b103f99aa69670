"""A0302: each row ran the configuration its variant declares.

What it checks: each row's `batch`, `precision`, `context` and `device` equal those of its
variant in `manifest.variants`, and every row's variant is declared.
Reads: manifest `/variants`; CSV `variant_id`, `batch`, `precision`, `context`, `device`.
Why it matters: A3.1: the CSV records the configuration actually applied; a row that says
batch 4 under the variant declared as batch 8 is not the announced comparison.
Example: row 12 is variant `batch-8` with `batch` 4.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_COLUMNS = ("batch", "precision", "context", "device")


@rule(
    code="A0302",
    title="variant configuration applied",
    protocol_ref="A3.1",
    severity="error",
    requires=("manifest", "results"),
    fix=(
        "Record the configuration actually applied, and re-run the variant with the declared one."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    declared = pl.DataFrame(
        [
            {"variant_id": v["variant_id"], **{f"d_{c}": v[c] for c in _COLUMNS}}
            for v in view.manifest["variants"]
        ],
        schema={
            "variant_id": pl.String,
            "d_batch": pl.Int64,
            "d_precision": pl.String,
            "d_context": pl.Int64,
            "d_device": pl.String,
        },
    )
    r = view.results.join(declared, on="variant_id", how="left")
    for row, v in r.filter(pl.col("d_batch").is_null()).select("row", "variant_id").iter_rows():
        yield RULE.finding(
            f"variant {v} is not declared in the manifest",
            artifact=RESULTS,
            row=row,
            observed=v,
            expected="a declared variant",
        )
    r = r.filter(pl.col("d_batch").is_not_null())
    for c in _COLUMNS:
        for row, v, got, want in (
            r.filter(pl.col(c) != pl.col(f"d_{c}"))
            .select("row", "variant_id", c, f"d_{c}")
            .iter_rows()
        ):
            yield RULE.finding(
                f"{c} differs from the one declared for variant {v}",
                artifact=RESULTS,
                row=row,
                observed=got,
                expected=want,
                evidence={"field": c},
            )


RULE = check
