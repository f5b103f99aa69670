"""What several of protocol A's mutations share: edits of the claims, of the CSV's bytes and of
a memory trace kept consistent with its `memory_stats` snapshot. Every import from `auditor` a
mutation needs is made here, in one place (the run edits themselves are runfactory's)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import runfactory as rf

from auditor.protocols.a.rules.a0709_memory_stats_agree import COUNTERS as A0709_COUNTERS


def edit_claims(root: Path, fn: Callable[[dict], None]) -> None:
    rf.edit_json(root, "claims.json", fn)


def keep_claims(root: Path, variant: str, phase: str, run: int, *cols: str) -> None:
    """Recompute the CSV's claims from the outputs but for COLS of the pass's row: the lie."""
    rows = rf.read_rows(root)
    n = rows.index(rf.pass_row(rows, variant, phase, run)) + 1
    rf.recompute_claims(root, keep=[(n, c) for c in cols])


def csv_bytes(root: Path, fn: Callable[[bytes], bytes]) -> None:
    """Rewrite resultats-bruts.csv's bytes (re-hashed)."""
    p = root / "resultats-bruts.csv"
    p.write_bytes(fn(p.read_bytes()))
    rf.rehash(root)


def set_trace_figure(d: dict, figure: str, value: int | None) -> None:
    """Set a memory trace's FIGURE and the memory_stats counter behind it (A0709), as a
    run that lies consistently would."""
    d[figure] = value
    for fig, snapshot, counter in A0709_COUNTERS:
        if fig == figure and value is not None:
            d[snapshot][counter] = value


def pass_figures(root: Path) -> dict:
    """The memory trace of the pass the memory mutations change."""
    return rf.read_json(root, "traces/memory/batch-1/warm-2.json")
