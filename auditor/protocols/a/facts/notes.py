"""The run's free-text notes (CSV `notes`, the manifest's `notes`) and the sentences a
pattern finds in them. Notes are never judged as claims: a rule that scans them only warns,
quoting the sentence, and points at the typed claim it should have been.

The phrases each warning looks for are data (`schemas/note-phrases.json`): per topic (a tail
percentile, a cadence, a ranking) and language (English and the seeds' Portuguese and
French), regular expressions matched case-insensitively; `phrases(topic)` compiles one
topic's, every language together."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

import polars as pl

import schemas
from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView


class Note(NamedTuple):
    """One free-text note and where it is."""

    artifact: str
    place: dict[str, Any]
    """Its place as finding keywords (`row` of the CSV, or the manifest's `pointer`)."""
    text: str
    variant: str | None
    """The variant of its CSV row; None for the manifest's notes."""


@per_view
def note_sources(view: RunView) -> tuple[Note, ...]:
    """Every free-text note: the CSV rows' in row order, then the manifest's."""
    out: list[Note] = []
    if view.results is not None:
        for row, variant, note in (
            view.results.select("row", "variant_id", "notes")
            .filter(pl.col("notes").is_not_null() & (pl.col("notes") != ""))
            .iter_rows()
        ):
            out.append(Note("resultats-bruts.csv", {"row": row}, note, variant))
    m = view.manifest or {}
    if isinstance(m.get("notes"), str) and m["notes"]:
        out.append(Note("manifest.json", {"pointer": "/notes"}, m["notes"], None))
    return tuple(out)


@cache
def phrases(topic: str) -> re.Pattern[str]:
    """The phrases of TOPIC (a key of `note-phrases.json`'s `topics`), every language in one
    case-insensitive pattern."""
    by_language = schemas.data("note_phrases")["topics"][topic]["phrases"]
    words = [p for ps in by_language.values() for p in ps]
    # the word boundary most phrases open with, tested once for all of them: measured about
    # 8x faster on the default run's notes than each branch testing its own
    bounded = [p[2:] for p in words if p.startswith(r"\b")]
    rest = [p for p in words if not p.startswith(r"\b")]
    parts = [r"\b(?:" + "|".join(f"(?:{p})" for p in bounded) + ")"] if bounded else []
    return re.compile("|".join(parts + [f"(?:{p})" for p in rest]), re.IGNORECASE)


SENTENCE_END = re.compile(r"(?<=[.;!?])\s+|\n")


def sentence_at(text: str, start: int, limit: int = 300) -> str:
    """The sentence of TEXT around position START (between `.`, `;`, `!`, `?` or a line
    break), shortened to LIMIT characters: what a note-scanning warning quotes."""
    begin, end = 0, len(text)
    for m in SENTENCE_END.finditer(text):
        if m.end() <= start:
            begin = m.end()
        elif m.start() >= start:
            end = m.start()
            break
    sentence = text[begin:end].strip()
    return sentence if len(sentence) <= limit else sentence[:limit] + "..."


def note_matches(
    view: RunView, pattern: re.Pattern[str]
) -> Iterator[tuple[str, dict[str, Any], str, str | None, str]]:
    """The first sentence of each note PATTERN finds: (artifact, place keywords, the matched
    text, the note's variant_id or None, the sentence quoted)."""
    for artifact, loc, text, variant in note_sources(view):
        for m in pattern.finditer(text):
            yield artifact, dict(loc), m.group(), variant, sentence_at(text, m.start())
            break
