"""The statistics both protocols quote, defined once: the p95 by nearest rank. A polars
expression (per file, per policy, vectorised) and the same expression over a list, so no
figure is computed two ways."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

P95 = 0.95


def nearest_rank_expr(values: pl.Expr, q: float = P95) -> pl.Expr:
    """The ceil(q n)-th smallest of VALUES (null when there is none): the nearest-rank
    percentile, which is always one of the values (no interpolation)."""
    n = values.len()
    return values.sort().slice(((n * q).ceil().cast(pl.Int64) - 1).clip(0), 1).first()


def nearest_rank(values: Sequence[float], q: float = P95) -> float | None:
    """`nearest_rank_expr` over VALUES (None when empty)."""
    if not values:
        return None
    series = pl.Series("v", values, dtype=pl.Float64)
    return series.to_frame().select(nearest_rank_expr(pl.col("v"), q)).item()
