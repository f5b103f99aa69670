"""Turn the loader's CSV format faults (`RunView.results_faults`) into findings of a rule."""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.view import RunView
from auditor.rule import Rule


def faults(rule: Rule, view: RunView, kinds: tuple[str, ...], expected: str
           ) -> Iterator[Finding]:
    f = view.results_faults.filter(pl.col("kind").is_in(list(kinds))).sort("line", "column")
    for r in f.iter_rows(named=True):
        named = {"field": r["column"]} if r["column"] else {}
        yield rule.finding(r["message"], artifact=RESULTS, row=r["row"], line=r["line"],
                           observed=r["value"], expected=expected, severity=r["severity"],
                           **named)
