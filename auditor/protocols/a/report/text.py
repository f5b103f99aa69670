"""How protocol A's report writes its figures: bytes, seconds, rates, decimals that keep an
order and an arithmetic, a corpus source, runs and passes in few words."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import PureWindowsPath
from typing import Any

from auditor.present import NOT_RECORDED


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return NOT_RECORDED
    return f"{n / 2**20:,.1f} MiB ({n:,} B)"


def fmt_s(seconds: float | None) -> str:
    return NOT_RECORDED if seconds is None else f"{seconds:.3f} s"


def fmt_rate(per_s: float | None) -> str:
    if per_s is None:
        return NOT_RECORDED
    return f"{per_s:,.0f} texts/s" if per_s >= 100 else f"{per_s:,.1f} texts/s"


def decimals_for(
    values: list[float],
    *,
    reference: float | None = None,
    tolerance: float | None = None,
    least: int = 4,
    most: int = 10,
) -> int:
    """The fewest decimals (at least LEAST) at which VALUES printed keep their order (no two
    different values print equal or the other way round) and `reference - tolerance` printed
    equals the printed reference minus the tolerance: the arithmetic on the page adds up."""
    for d in range(least, most + 1):
        shown = [Decimal(f"{v:.{d}f}") for v in values]
        ordered = all(
            (a < b) == (sa < sb) and (a == b) == (sa == sb)
            for a, sa in zip(values, shown, strict=True)
            for b, sb in zip(values, shown, strict=True)
        )
        adds_up = (
            reference is None
            or tolerance is None
            or Decimal(f"{reference:.{d}f}") - Decimal(str(tolerance))
            == Decimal(f"{reference - tolerance:.{d}f}")
        )
        if ordered and adds_up:
            return d
    return most


def corpus_name(source: Any) -> str | None:
    """A corpus source that is a local path shows only its file name (the revision hash
    identifies it); a description is kept as it is."""
    if not isinstance(source, str):
        return None
    looks_like_path = re.match(r"^(/|~|[A-Za-z]:[\\/]|\.{1,2}[\\/])", source) or (
        re.search(r"[\\/]", source) and re.search(r"\.\w{2,8}$", source)
    )
    return PureWindowsPath(source).name if looks_like_path else source


def runs_text(runs: set[int]) -> str:
    """{1, 2, 3, 5} -> `1–3, 5`."""
    out, seq = [], sorted(runs)
    i = 0
    while i < len(seq):
        j = i
        while j + 1 < len(seq) and seq[j + 1] == seq[j] + 1:
            j += 1
        out.append(str(seq[i]) if i == j else f"{seq[i]}–{seq[j]}")
        i = j + 1
    return ", ".join(out)


def passes_text(passes: list[tuple[str, str, int]]) -> str:
    """Passes in few words: `warm 1–5 of batch-1, batch-4` (phases in the cold, warm order)."""
    by_phase: dict[str, dict[str, set[int]]] = {}
    for vid, phase, run in passes:
        by_phase.setdefault(phase, {}).setdefault(vid, set()).add(run)
    parts = []
    for phase in sorted(by_phase, key=lambda ph: (ph != "cold", ph)):
        runs = by_phase[phase]
        if len({frozenset(r) for r in runs.values()}) == 1:
            parts.append(
                f"{phase} {runs_text(next(iter(runs.values())))} of " + ", ".join(sorted(runs))
            )
        else:
            parts.extend(f"{vid} {phase} {runs_text(r)}" for vid, r in sorted(runs.items()))
    return "; ".join(parts)
