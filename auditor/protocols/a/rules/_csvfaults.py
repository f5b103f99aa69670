"""Turn the loader's CSV format faults (`RunView.results_faults`) into findings of a rule."""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import COLUMN_REFS, RESULTS
from auditor.protocols.a.view import RunView
from auditor.rule import Rule


def faults(rule: Rule, view: RunView, kinds: tuple[str, ...], expected: str,
           by_column: bool = False) -> Iterator[Finding]:
    """Findings of RULE for the CSV faults of KINDS; BY_COLUMN: each under the protocol rule
    its column serves (`COLUMN_REFS`), the most specific one."""
    f = view.results_faults.filter(pl.col("kind").is_in(list(kinds))).sort("line", "column")
    for r in f.iter_rows(named=True):
        named = {"field": r["column"]} if r["column"] else {}
        ref = COLUMN_REFS.get(r["column"]) if by_column and r["column"] else None
        yield rule.finding(r["message"], artifact=RESULTS, row=r["row"], line=r["line"],
                           observed=r["value"], expected=expected, severity=r["severity"],
                           protocol_ref=ref, **named)
