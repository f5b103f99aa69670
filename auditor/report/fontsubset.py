"""Subset the PDF's fonts without decoding the tables the subset drops.

WeasyPrint subsets each embedded face with fontTools (HarfBuzz-Subset is not on every
system) and asks it to drop the layout tables GSUB and GPOS. fontTools (4.60 on) first
decodes both, to convert their in-memory layout (`_compact_layout_tables`), and only then
drops them: for DejaVu Sans, GSUB and GPOS are most of the file, and the four faces of a
report took about 0.5 s of it, 0.25 s without that decoding, on the 2-core dev machine.

`drop_before_subsetting` deletes, just before fontTools' subset, what it would drop at the
start of it anyway: the dropped layout tables, and the legacy `kern` table where fontTools
drops it for being superseded by GPOS (`--legacy-kern` off). The fonts are byte-identical
(tests/test_report_speed.py subsets matplotlib's DejaVu faces both ways); only the order
of the work changes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

LAYOUT = ("GSUB", "GPOS")
"""The tables fontTools decodes before it drops them."""


def drop_early(font: Any, options: Any) -> None:
    """Delete from FONT (a TTFont) what a subset with OPTIONS drops before reading it."""
    if (
        "kern" in font
        and "GPOS" in font
        and "GPOS" in options.drop_tables
        and not options.legacy_kern
    ):
        del font["kern"]  # fontTools drops kern when GPOS is there, before dropping GPOS
    for tag in LAYOUT:
        if tag in options.drop_tables and tag in font:
            del font[tag]


@contextmanager
def drop_before_subsetting() -> Iterator[None]:
    """Within: every fontTools `Subsetter.subset` first does `drop_early`."""
    from fontTools import subset

    original = subset.Subsetter.subset

    def early(self: Any, font: Any) -> None:
        drop_early(font, self.options)
        original(self, font)

    subset.Subsetter.subset = early
    try:
        yield
    finally:
        subset.Subsetter.subset = original
