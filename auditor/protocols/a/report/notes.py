"""The report's pass notes of protocol A: the `; `-separated parts every pass repeats shown
once above the pass table, and each note that says more once with the passes that carry it.
Nothing is dropped: the common text plus a pass's own text is the pass's whole note."""

from __future__ import annotations

from typing import Any

from auditor.protocols.a.report.text import passes_text, runs_text

PASS_TOKEN = "‹pass›"
"""Stands for `<variant>/<phase>-<run>` in a note part every pass repeats with its own pass
(e.g. its artifact paths), so the part is shown once."""


def factor_common_notes(timings: list[dict[str, Any]]) -> str:
    """Move the `; `-separated parts of `notes` that every pass repeats into one text, shown
    once above the pass table, and leave each pass only what is its own. A part that differs
    only by the pass's own `<variant>/<phase>-<run>` (its artifact paths) counts as repeated
    and is shown once with ‹pass› in its place. Nothing is dropped: the common text, with
    ‹pass› read as the pass, plus a pass's own text is the pass's whole note, part for part."""
    passes = [(t["variant_id"], p) for t in timings for p in t["passes"]]
    if len(passes) < 2:
        return ""

    def template(vid: str, p: dict, part: str) -> str:
        return part.replace(f"{vid}/{p['phase']}-{p['run_index']}", PASS_TOKEN)

    split = [
        [template(vid, p, part) for part in p["notes"].split("; ")] if p["notes"] else []
        for vid, p in passes
    ]
    common = set(split[0]).intersection(*split[1:])
    for (_, p), raw, parts in zip(
        passes,
        [p["notes"].split("; ") if p["notes"] else [] for _, p in passes],
        split,
        strict=True,
    ):
        p["notes"] = "; ".join(r for r, t in zip(raw, parts, strict=True) if t not in common)
    return "; ".join(part for part in split[0] if part in common)


def own_notes(timings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The notes that say more than what every pass shares, each once with the passes that
    carry it (a note repeated by every warm pass is one line, not one per pass)."""
    by_note: dict[str, list[tuple[str, str, int]]] = {}
    rows: dict[str, list[int]] = {}
    for t in timings:
        for p in t["passes"]:
            if p["notes"]:
                by_note.setdefault(p["notes"], []).append(
                    (t["variant_id"], p["phase"], p["run_index"])
                )
                rows.setdefault(p["notes"], []).append(p["row"])
    out = []
    for note, passes in by_note.items():
        nums = {r for r in rows[note] if r is not None}
        out.append(
            {
                "passes": passes_text(passes),
                "count": len(passes),
                "notes": note,
                "rows": (
                    f"CSV row{'s' if len(nums) > 1 else ''} {runs_text(nums)}" if nums else None
                ),
            }
        )
    return out
