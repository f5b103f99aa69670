"""Turn the loader's CSV format faults (`RunView.results_faults`) into findings of a rule."""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.load import RESULTS, RunView
from auditor.model import Finding
from auditor.rules.base import Rule


def faults(rule: Rule, view: RunView, kinds: tuple[str, ...], expected: str
           ) -> Iterator[Finding]:
    f = view.results_faults.filter(pl.col("kind").is_in(list(kinds))).sort("line", "column")
    for r in f.iter_rows(named=True):
        loc = f"row {r['row']}" if r["row"] is not None else (
            f"line {r['line']}" if r["line"] is not None else None)
        ev = {"line": r["line"]} if r["row"] is not None else {}
        if r["column"]:
            ev["column"] = r["column"]
        yield rule.finding(r["message"], artifact=RESULTS, location=loc, observed=r["value"],
                           expected=expected, severity=r["severity"], **ev)
