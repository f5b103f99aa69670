"""Helper of the rules that hold every row of the results CSV to one value per column
(A0102 the pinned revisions and seed, A0401 the observed environment)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import polars as pl


def differing_cells(
    results: pl.DataFrame, want: Mapping[str, str], *, null_as: str | None = None
) -> Iterator[tuple[str, str, pl.DataFrame]]:
    """For each column of WANT with cells other than its value: (column, value, its rows
    that differ, as `row` and the column). An empty cell differs, or reads as NULL_AS when
    given. One query flags every column, so a clean table costs one, not one per column."""

    def differs(col: str, value: str) -> pl.Expr:
        if null_as is None:
            return (pl.col(col) != value).fill_null(True)
        return pl.col(col).fill_null(null_as) != value

    flags = results.select(
        "row", *want, *[differs(c, v).alias(f"_bad_{c}") for c, v in want.items()]
    ).filter(pl.any_horizontal(pl.col(f"_bad_{c}") for c in want))
    if not flags.height:
        return
    for col, value in want.items():
        bad = flags.filter(pl.col(f"_bad_{col}")).select("row", col)
        if bad.height:
            yield col, value, bad
