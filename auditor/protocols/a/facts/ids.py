"""Identifiers as a reader takes them: two IDs that look the same (compatibility forms,
invisible characters, surrounding spaces, case) and are not the same bytes are not the same
ID, and an answer under such a lookalike is one for an ID outside the list (A2.1, A2.6)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from auditor.protocols.a.facts.passes import expected_index

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView

INVISIBLE = r"[\p{Default_Ignorable_Code_Point}\p{Cf}]"
"""Characters a reader does not see: zero-width spaces and joiners, the BOM (U+FEFF), the
soft hyphen, direction marks and the other format and default-ignorable code points."""


def normalized_id(column: str = "id") -> pl.Expr:
    """An identifier as a reader would take it: compatibility-normalised (NFKC: a fullwidth
    `：` is `:`), invisible characters (`INVISIBLE`) removed, surrounding whitespace cut. Two
    IDs with the same normalized form and different bytes look the same (`ev-1`,
    `ev-1` with a U+200B or a U+FEFF, `ev-1 `) and are not."""
    return pl.col(column).str.normalize("NFKC").str.replace_all(INVISIBLE, "").str.strip_chars()


def casefolded_id(column: str = "id") -> pl.Expr:
    """`normalized_id`, case-folded: IDs equal under it and not under `normalized_id` differ
    only by case, which many corpora use for distinct items (`typing:Final`,
    `typing:final`); whether they are one text is for the inputs to say."""
    return normalized_id(column).str.to_lowercase()


def lookalikes(view: RunView, ids: list[str]) -> dict[str, str]:
    """Of IDS (outside the expected list), those that normalise (`normalized_id`) to an
    expected ID, mapped to it: an answer for the right text under an ID that is not it."""
    if not ids or view.expected_ids is None:
        return {}
    exp = expected_index(view).select(normalized_id().alias("key"), pl.col("id").alias("to"))
    got = pl.DataFrame({"id": ids}, schema={"id": pl.String}).with_columns(
        normalized_id().alias("key")
    )
    hits = got.join(exp.unique("key", keep="first"), on="key", how="inner")
    return dict(zip(hits["id"], hits["to"], strict=True))
