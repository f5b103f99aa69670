"""A text list of identifiers, one per line (`corpus/expected_ids.txt`, the split lists):
`line`, `id` in file order, duplicates kept (judging them is a rule's job). A final newline
ends the last line; a CR before it is not part of the ID."""

from __future__ import annotations

import polars as pl

from auditor.readers.base import Read, utf8_fault


def read(data: bytes, *, name: str) -> Read[pl.DataFrame]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Read(None, (utf8_fault(data, exc, name),))
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    frame = (
        pl.DataFrame({"id": pl.Series(lines, dtype=pl.String)})
        .with_row_index("line", offset=1)
        .with_columns(pl.col("line").cast(pl.Int64), pl.col("id").str.strip_suffix("\r"))
    )
    return Read(frame)
