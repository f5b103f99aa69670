"""Per pass, what its output file shows against corpus/expected_ids.txt, vectorized with
polars: the expected-ID index, the output lines indexed against it, per output file its
counts, set comparison, format and quality (`pass_stats`), the CSV rows joined with them,
and the variants and corpora accepted as recomputed (IDs exactly once, valid format, quality
rule met). `index_expected` and `output_file_stats` are also the view's: the loader counts
each batch of output files with them as it reads (`view.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

from auditor.protocols.a.facts.quality import class_counts, meets_rule, metric_of, quality_values
from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView

KEY = ["variant_id", "phase", "run_index"]
"""The columns that name a pass in every per-pass frame."""


def pass_name(variant: str, phase: str, run: int) -> str:
    return f"{variant}/{phase}-{run}"


def index_expected(expected_ids: pl.DataFrame, references: pl.DataFrame | None) -> pl.DataFrame:
    """The distinct expected IDs in list order: `id`, `exp` (position) and `ref` (the label
    of the ID's first reference line; null without one or without references)."""
    exp = (
        expected_ids.select("id")
        .unique(maintain_order=True)
        .with_row_index("exp")
        .with_columns(pl.col("exp").cast(pl.Int64))
    )
    if references is None:
        return exp.with_columns(pl.lit(None, dtype=pl.String).alias("ref"))
    refs = references.unique(subset="id", keep="first", maintain_order=True).select(
        "id", pl.col("label").alias("ref")
    )
    return exp.join(refs, on="id", how="left", maintain_order="left")


@per_view
def expected_index(view: RunView) -> pl.DataFrame:
    """`index_expected` of the view's expected IDs and references."""
    assert view.expected_ids is not None
    return index_expected(view.expected_ids, view.references)


def _usable(classes: Sequence[str]) -> pl.Expr:
    """`ok`: a valid line with a declared label."""
    return (pl.col("valid") & pl.col("label").is_in(list(classes))).fill_null(False).alias("ok")


@per_view
def indexed_outputs(view: RunView) -> pl.DataFrame:
    """The output lines the view holds (see `RunView.outputs`: every line, or the lines of
    the files with a fault) with `exp` (the expected ID's position among the distinct
    expected IDs, null for an ID outside the list), `ref` (its reference label) and `ok`
    (valid line with a declared label). One hash join of those lines against the list."""
    assert view.outputs is not None
    return view.outputs.join(
        expected_index(view), on="id", how="left", maintain_order="left"
    ).with_columns(_usable(view.classes))


def _file_aggregates(classes: Sequence[str]) -> list[pl.Expr]:
    """What `pass_stats` counts per output file, over its indexed lines (`indexed_outputs`'
    columns): `lines, observed_ids, n_present, n_extra, invalid_lines, n_invalid,
    bad_label_lines, n_bad_label, usable, order_diffs, order_first_line, order_first_id` and
    the metric's per-class counts."""
    c_id, c_exp, c_line = pl.col("id"), pl.col("exp"), pl.col("line")
    extra = c_id.is_not_null() & c_exp.is_null()
    bad_label = pl.col("valid") & ~pl.col("ok")
    off = (c_exp != c_line - 1).fill_null(True)
    return [
        pl.len().alias("lines"),
        c_id.is_not_null().sum().alias("observed_ids"),
        c_exp.drop_nulls().n_unique().alias("n_present"),
        c_id.filter(extra).n_unique().alias("n_extra"),
        c_line.filter(~pl.col("valid")).head(20).alias("invalid_lines"),
        (~pl.col("valid")).sum().alias("n_invalid"),
        c_line.filter(bad_label).head(20).alias("bad_label_lines"),
        bad_label.sum().alias("n_bad_label"),
        pl.col("ok").sum().alias("usable"),
        off.sum().alias("order_diffs"),
        c_line.filter(off).first().alias("order_first_line"),
        c_id.filter(off).first().alias("order_first_id"),
        *class_counts(list(classes)),
    ]


def output_file_stats(
    lines: pl.DataFrame, exp: pl.DataFrame, classes: Sequence[str]
) -> tuple[pl.DataFrame, pl.Series]:
    """The `_file_aggregates` of the output files whose lines (`file_no`, `line`, `id`,
    `label`, `valid`, ...) are LINES, against EXP (`index_expected`), as they are read; and
    the `file_no` of the clean ones: one valid line with a declared label per expected ID,
    in list order. A clean file's lines are known from the list (its labels enter only the
    per-class counts), so a loader keeps the lines of the other files only."""
    o = _with_expected(lines, exp).with_columns(_usable(classes))
    rows = o.group_by("file_no", maintain_order=True).agg(_file_aggregates(classes))
    clean = rows.filter(
        (pl.col("lines") == exp.height)
        & (pl.col("order_diffs") == 0)
        & (pl.col("n_invalid") + pl.col("n_bad_label") == 0)
    )["file_no"]
    return rows, clean


def _with_expected(lines: pl.DataFrame, exp: pl.DataFrame) -> pl.DataFrame:
    """LINES with EXP's `exp` and `ref` for each line's ID (null for an ID not in the list):
    the left join on `id`, taken by position when every line N holds the list's Nth ID (the
    usual file, in list order: no hash table). The IDs of EXP are distinct, so the row a
    line's ID matches is that one row, and both ways give the same columns."""
    at = pl.when(pl.col("line") <= exp.height).then(pl.col("line") - 1).cast(pl.Int64).alias("exp")
    placed = lines.select(at)["exp"]
    if (
        lines.height
        and placed.null_count() == 0
        and (lines["id"] == exp["id"].gather(placed)).fill_null(False).all()
    ):
        return lines.with_columns(placed, exp["ref"].gather(placed).alias("ref"))
    return lines.join(exp, on="id", how="left", maintain_order="left")


@per_view
def pass_stats(view: RunView) -> pl.DataFrame:
    """One row per output file, in `output_index` order: `variant_id, phase, run_index, file,
    lines, observed_ids, unique_ids, n_dup, dup_ids, dup_line, n_missing, missing_ids,
    n_extra, extra_ids, extra_line, n_invalid, invalid_lines, n_bad_label, bad_label_lines,
    usable, quality_value, ids_match, format_valid, quality_ok, accepted` (lists hold at most
    20 items; `dup_line`/`extra_line`: first line of a repeated or an extra ID), and for
    A0303 `order_diffs`, `order_first_line`, `order_first_id`: the lines whose expected-ID
    position differs from their line number, the first of them and its ID.

    One grouped pass over all output lines computes every count and the metric's per-class
    counts; integer positions of the expected IDs carry the set work (no cross join of files
    x IDs). The ID lists, and the metric of a file with a repeated ID (its first usable line
    per ID is the prediction), are computed only for the few files that have a fault."""
    o = indexed_outputs(view)
    exp_ids = expected_index(view)["id"]
    n_exp = exp_ids.len()
    classes = list(view.classes)
    c_id, c_exp, c_line = pl.col("id"), pl.col("exp"), pl.col("line")
    extra = c_id.is_not_null() & c_exp.is_null()
    # Streamed outputs: the per-file aggregates were computed as each file was read.
    base = (
        view.output_stats
        if view.output_stats is not None
        else o.group_by("file_no").agg(_file_aggregates(classes))
    )
    idx = view.output_index.with_row_index("file_no").with_columns(pl.col("file_no").cast(pl.Int64))
    out = idx.join(base, on="file_no", how="left", maintain_order="left")
    counts = [
        "lines",
        "observed_ids",
        "n_present",
        "n_extra",
        "n_invalid",
        "n_bad_label",
        "usable",
        "order_diffs",
    ]
    out = out.with_columns([pl.col(c).fill_null(0).cast(pl.Int64) for c in counts])
    out = out.with_columns(
        (pl.col("n_present") + pl.col("n_extra")).alias("unique_ids"),
        (n_exp - pl.col("n_present")).alias("n_missing"),
    )
    surplus = pl.col("observed_ids") > pl.col("unique_ids")
    dup_nos = out.filter(surplus)["file_no"]
    miss_nos = out.filter(pl.col("n_missing") > 0).select("file_no")
    extra_nos = out.filter(pl.col("n_extra") > 0)["file_no"]
    # ID lists, only for the files with a fault; none such (a clean run): no query, typed
    # nulls (filled below as for a clean file among faulty ones).
    absent: dict[str, pl.DataType] = {}
    parts: list[pl.DataFrame] = []
    if dup_nos.len():
        parts.append(
            o.filter(pl.col("file_no").is_in(dup_nos.implode()) & c_id.is_not_null())
            .group_by("file_no", "id")
            .agg(pl.len(), c_line.sort().slice(1, 1).first())
            .filter(pl.col("len") > 1)
            .group_by("file_no")
            .agg(
                pl.len().alias("n_dup"),
                c_id.sort().head(20).alias("dup_ids"),
                c_line.min().alias("dup_line"),
            )
        )
    else:
        absent.update(n_dup=pl.UInt32(), dup_ids=pl.List(pl.String), dup_line=pl.Int64())
    if miss_nos.height:
        exp_frame = (
            exp_ids.to_frame().with_row_index("exp").with_columns(pl.col("exp").cast(pl.Int64))
        )
        present = o.filter(
            pl.col("file_no").is_in(miss_nos["file_no"].implode()) & c_exp.is_not_null()
        ).select("file_no", "exp")
        parts.append(
            miss_nos.join(exp_frame, how="cross")
            .join(present, on=["file_no", "exp"], how="anti")
            .group_by("file_no")
            .agg(c_id.sort().head(20).alias("missing_ids"))
        )
    else:
        absent.update(missing_ids=pl.List(pl.String))
    if extra_nos.len():
        parts.append(
            o.filter(pl.col("file_no").is_in(extra_nos.implode()) & extra)
            .group_by("file_no")
            .agg(c_id.unique().sort().head(20).alias("extra_ids"), c_line.min().alias("extra_line"))
        )
    else:
        absent.update(extra_ids=pl.List(pl.String), extra_line=pl.Int64())
    for part in parts:
        out = out.join(part, on="file_no", how="left", maintain_order="left")
    if absent:
        out = out.with_columns(pl.lit(None, dtype=t).alias(c) for c, t in absent.items())
    out = out.with_columns(pl.col("n_dup").fill_null(0).cast(pl.Int64))
    out = out.with_columns(
        [
            pl.col(c).fill_null([])
            for c in ("dup_ids", "missing_ids", "extra_ids", "invalid_lines", "bad_label_lines")
        ]
    )
    out = out.with_columns(
        quality_values(o, out, expected_index(view), classes, metric_of(view.manifest), dup_nos)
    )
    out = out.with_columns(
        ((pl.col("n_dup") == 0) & (pl.col("n_missing") == 0) & (pl.col("n_extra") == 0)).alias(
            "ids_match"
        ),
        ((pl.col("n_invalid") == 0) & (pl.col("n_bad_label") == 0)).alias("format_valid"),
        meets_rule(view.manifest),
    )
    return out.select(
        "variant_id",
        "phase",
        "run_index",
        "file",
        "lines",
        "observed_ids",
        "unique_ids",
        "n_dup",
        "dup_ids",
        "dup_line",
        "n_missing",
        "missing_ids",
        "n_extra",
        "extra_ids",
        "extra_line",
        "n_invalid",
        "invalid_lines",
        "n_bad_label",
        "bad_label_lines",
        "usable",
        "quality_value",
        "ids_match",
        "format_valid",
        "quality_ok",
        (pl.col("ids_match") & pl.col("format_valid") & pl.col("quality_ok")).alias("accepted"),
        "order_diffs",
        "order_first_line",
        "order_first_id",
    )


@per_view
def rows_with_stats(view: RunView) -> pl.DataFrame:
    """CSV rows joined with their output file's recomputed stats (inner join); the
    recomputed columns that share a CSV name are prefixed `re_`."""
    assert view.results is not None
    stats = pass_stats(view).rename(
        {c: f"re_{c}" for c in ("observed_ids", "quality_value", "ids_match", "format_valid")}
    )
    return view.results.join(stats, on=KEY, how="inner")


@per_view
def variant_accepted(view: RunView) -> pl.DataFrame:
    """Per variant (from the CSV): distinct corpus revisions with a recomputed accepted pass,
    `accepted_corpora`."""
    assert view.results is not None
    r = rows_with_stats(view)
    return (
        view.results.select("variant_id")
        .unique()
        .join(
            r.filter(pl.col("accepted"))
            .group_by("variant_id")
            .agg(pl.col("corpus_revision").n_unique().alias("accepted_corpora")),
            on="variant_id",
            how="left",
        )
        .with_columns(pl.col("accepted_corpora").fill_null(0))
    )


@per_view
def variants_accepted(view: RunView) -> frozenset[str]:
    """Variants every pass of which the auditor recomputes as accepted (IDs exactly once,
    valid format, quality rule met), from the output files alone; a variant with a failed
    or unaccepted pass is not an accepted configuration."""
    if view.outputs is None or view.expected_ids is None:
        return frozenset()
    per = pass_stats(view).group_by("variant_id").agg(pl.col("accepted").all())
    return frozenset(v for v, ok in per.iter_rows() if ok)


@per_view
def accepted_corpora(view: RunView) -> int:
    """Distinct corpora with a pass recomputed as accepted (A9.3): the corpus revisions of
    the rows whose output file is accepted, never a count of repetitions."""
    if view.results is None or view.outputs is None or view.expected_ids is None:
        return 0
    return (
        rows_with_stats(view)
        .filter(pl.col("accepted"))
        .get_column("corpus_revision")
        .drop_nulls()
        .n_unique()
    )


@per_view
def texts_per_corpus(view: RunView) -> int | None:
    """The evaluation texts of one corpus (the distinct expected IDs): the unit of
    throughput; None without an expected-ID list."""
    return expected_index(view).height if view.expected_ids is not None else None
