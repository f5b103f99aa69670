"""Helpers shared by the A7 rules that look for invented memory figures in notes and traces."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import schemas
from auditor.protocols.a.view import RunView

_KNOWN = set(schemas.load("memory_trace")["properties"])


def note_targets(view: RunView, figures: Callable[[dict], list[int]]
                 ) -> Iterator[tuple[str, dict[str, Any], str, list[int]]]:
    """(artifact, its place as finding keywords, note text, the figures of its pass) for
    every note; the manifest's notes are held against the figures of every pass."""
    if view.results is None:
        return
    cols = ("baseline_allocated_bytes", "baseline_reserved_bytes", "peak_allocated_bytes",
            "peak_reserved_bytes")
    every: list[int] = []
    for r in view.results.select("row", "notes", *cols).iter_rows(named=True):
        f = figures(r)
        every += f
        if r["notes"]:
            yield "resultats-bruts.csv", {"row": r["row"]}, r["notes"], f
    m = view.manifest or {}
    if isinstance(m.get("notes"), str) and m["notes"]:
        yield "manifest.json", {"pointer": "/notes"}, m["notes"], every


_FIGURE = re.compile(r"(?<![\w.])(\d[\d,_]*(?:\.\d+)?)\s*(bytes|byte|B|KiB|KB|kB|MiB|MB|GiB|GB)?\b")
_UNIT = {None: 1, "bytes": 1, "byte": 1, "B": 1, "KiB": 2**10, "KB": 1e3, "kB": 1e3,
         "MiB": 2**20, "MB": 1e6, "GiB": 2**30, "GB": 1e9}


def matches(text: str, targets: list[int]) -> str | None:
    """The figure of TEXT equal to a target: a bare number only when it is the exact byte
    count; a number with a unit (MiB, GB...) at the precision it is written with. Bare small
    numbers (epochs, sizes, load averages) are never taken for memory figures."""
    if not targets:
        return None
    for m in _FIGURE.finditer(text):
        token, unit = m.group(1), m.group(2)
        try:
            x = float(token.replace(",", "").replace("_", ""))
        except ValueError:
            continue
        decimals = len(token.split(".")[1]) if "." in token else 0
        scale = _UNIT[unit]
        for t in targets:
            if scale == 1:
                if x == t:
                    return m.group(0).strip()
            elif abs(x - t / scale) <= 0.5 * 10 ** -decimals:
                return m.group(0).strip()
    return None


def extra_figures(doc: dict, name_pattern: re.Pattern | None = None
                  ) -> Iterator[tuple[str, int | float]]:
    """Figures of a memory trace outside the schema's own fields, and `other_sources`
    values: (JSON pointer, value); only those whose name matches NAME_PATTERN if given."""
    for k, v in doc.items():
        if k not in _KNOWN and isinstance(v, int | float) and not isinstance(v, bool) and (
                name_pattern is None or name_pattern.search(k)):
            yield f"/{k}", v
    for n, src in enumerate(doc.get("other_sources") or []):
        if name_pattern is None or name_pattern.search(str(src.get("name", ""))):
            yield f"/other_sources/{n}/value", src.get("value")


def trace_figures_equal_to(view: RunView, figures: Callable[[dict], list[int]],
                           name_pattern: re.Pattern | None = None
                           ) -> Iterator[tuple[str, str, int | float]]:
    """(trace file, JSON pointer, value) of every extra figure of a memory trace that equals
    one of FIGURES of that same trace (e.g. allocated + reserved)."""
    for key in sorted(view.memory_traces):
        doc = view.memory_traces[key]
        forbidden = set(figures(doc))
        for where, value in extra_figures(doc, name_pattern=name_pattern):
            if value in forbidden:
                yield view.memory_trace_files[key], where, value
