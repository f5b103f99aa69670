"""What a run's CSV rows claim about their passes, beside what the auditor recomputes: a
fault in a pass its row honestly declares failed is a warning, not an error (A6.4)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import polars as pl

from auditor.protocols.a.facts.passes import KEY

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView


def claimed_true(row: dict[str, Any], *columns: str) -> bool:
    """Whether ROW claims one of COLUMNS true (an empty cell claims nothing)."""
    return any(row.get(c) is True for c in columns)


def with_claims(
    view: RunView, per_file: pl.DataFrame, *columns: str
) -> Iterator[tuple[dict, bool]]:
    """Each row of PER_FILE (keyed by KEY) and whether its CSV row claims one of COLUMNS
    true. A fault in a pass the row honestly declares failed is a warning, not an error
    (A6.4); without a CSV, every fault counts as claimed."""
    if view.results is None:
        for s in per_file.iter_rows(named=True):
            yield s, True
        return
    joined = per_file.join(view.results.select([*KEY, *columns]), on=KEY, how="left")
    for s in joined.iter_rows(named=True):
        yield s, claimed_true(s, *columns)
