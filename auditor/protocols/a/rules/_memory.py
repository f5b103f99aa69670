"""Helpers shared by the A7 rules that look for invented memory figures: the typed figures a
run states (`claims.json` `memory_figures`, memory-trace fields outside the schema and
`other_sources`) are compared with the pass's own baselines and peaks; the free-text notes
are only scanned for a warning that quotes the sentence."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import schemas
from auditor.protocols.a.artifacts import CLAIMS
from auditor.protocols.a.facts.notes import sentence_at
from auditor.protocols.a.facts.passes import KEY
from auditor.protocols.a.view import RunView

_KNOWN = set(schemas.load("memory_trace")["properties"])
CELLS = (
    "baseline_allocated_bytes",
    "baseline_reserved_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
)
UNIT = {
    "bytes": 1,
    "B": 1,
    "byte": 1,
    "KiB": 2**10,
    "KB": 1e3,
    "kB": 1e3,
    "MiB": 2**20,
    "MB": 1e6,
    "GiB": 2**30,
    "GB": 1e9,
}


def equals_figure(value: float, unit: str, targets: list[int], decimals: int | None = None) -> bool:
    """Whether VALUE in UNIT is one of TARGETS (bytes): exactly for bytes, else at the
    precision the value is written with (DECIMALS, by default those of its shortest repr)."""
    scale = UNIT[unit]
    if scale == 1:
        return any(value == t for t in targets)
    if decimals is None:
        text = repr(float(value))
        decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 0
        decimals = 0 if text.endswith(".0") else decimals
    return any(abs(value - t / scale) <= 0.5 * 10**-decimals for t in targets)


def claimed_figures(
    view: RunView, figures: Callable[[dict], list[int]]
) -> Iterator[tuple[str, str, dict[str, Any], list[int]]]:
    """(artifact, JSON pointer, figure, the FIGURES it must not equal) for every
    `memory_figures` entry of claims.json: those of its pass when it names one, else those
    of every pass of the CSV."""
    claims = view.claims or {}
    if view.results is None or not claims.get("memory_figures"):
        return
    per_pass = {
        tuple(r[k] for k in KEY): figures(r)
        for r in view.results.select(*KEY, *CELLS).iter_rows(named=True)
    }
    every = sorted({t for ts in per_pass.values() for t in ts})
    for n, fig in enumerate(claims["memory_figures"]):
        key = (fig.get("variant_id"), fig.get("phase"), fig.get("run_index"))
        yield CLAIMS, f"/memory_figures/{n}", fig, per_pass.get(key, every)


def note_targets(
    view: RunView, figures: Callable[[dict], list[int]]
) -> Iterator[tuple[str, dict[str, Any], str, list[int]]]:
    """(artifact, its place as finding keywords, note text, the figures of its pass) for
    every note; the manifest's notes are held against the figures of every pass."""
    if view.results is None:
        return
    every: list[int] = []
    for r in view.results.select("row", "notes", *CELLS).iter_rows(named=True):
        f = figures(r)
        every += f
        if r["notes"]:
            yield "resultats-bruts.csv", {"row": r["row"]}, r["notes"], f
    m = view.manifest or {}
    if isinstance(m.get("notes"), str) and m["notes"]:
        yield "manifest.json", {"pointer": "/notes"}, m["notes"], every


_FIGURE = re.compile(r"(?<![\w.])(\d[\d,_]*(?:\.\d+)?)\s*(bytes|byte|B|KiB|KB|kB|MiB|MB|GiB|GB)?\b")


def quote_match(text: str, targets: list[int]) -> str | None:
    """The sentence of TEXT holding a figure equal to a target: a bare number only when it
    is the exact byte count; a number with a unit (MiB, GB...) at the precision it is
    written with. Bare small numbers (epochs, sizes, load averages) are never taken for
    memory figures."""
    if not targets:
        return None
    for m in _FIGURE.finditer(text):
        token, unit = m.group(1), m.group(2) or "bytes"
        try:
            x = float(token.replace(",", "").replace("_", ""))
        except ValueError:
            continue
        decimals = len(token.split(".")[1]) if "." in token else 0
        if equals_figure(x, unit, targets, decimals):
            return sentence_at(text, m.start())
    return None


def extra_figures(
    doc: dict, name_pattern: re.Pattern | None = None
) -> Iterator[tuple[str, int | float]]:
    """Figures of a memory trace outside the schema's own fields, and `other_sources`
    values: (JSON pointer, value); only those whose name matches NAME_PATTERN if given."""
    for k, v in doc.items():
        if (
            k not in _KNOWN
            and isinstance(v, int | float)
            and not isinstance(v, bool)
            and (name_pattern is None or name_pattern.search(k))
        ):
            yield f"/{k}", v
    for n, src in enumerate(doc.get("other_sources") or []):
        if name_pattern is None or name_pattern.search(str(src.get("name", ""))):
            yield f"/other_sources/{n}/value", src.get("value")


def trace_figures_equal_to(
    view: RunView, figures: Callable[[dict], list[int]], name_pattern: re.Pattern | None = None
) -> Iterator[tuple[str, str, int | float]]:
    """(trace file, JSON pointer, value) of every extra figure of a memory trace that equals
    one of FIGURES of that same trace (e.g. allocated + reserved)."""
    for key in sorted(view.memory_traces):
        doc = view.memory_traces[key]
        forbidden = set(figures(doc))
        for where, value in extra_figures(doc, name_pattern=name_pattern):
            if value in forbidden:
                yield view.memory_trace_files[key], where, value
