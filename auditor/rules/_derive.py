"""Tables several rules derive from the same raw files, computed once per view (cached on the
view's identity) and vectorized with polars: per output file, the set comparison against
corpus/expected_ids.txt and the quality metric recomputed from outputs and references.

Metric conventions (documented for reviewers; the same as scikit-learn with
`zero_division=0`): a prediction is the first valid line for an expected ID whose label is a
declared class; an expected ID without one counts as wrong (a false negative of its reference
class, no false positive). Per class c: F1 = 2·TP / (predicted_c + reference_c), 0 when both
are 0. `macro_f1` = unweighted mean of F1 over the declared classes present in the references
or the predictions; `weighted_f1` = mean weighted by reference support; `micro_f1` =
2·ΣTP / (Σpredicted + Σreference); `accuracy` = ΣTP / number of reference IDs. A pass with no
valid line has no value (empty cell).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from auditor.load import RunView

EPS = 1e-9
#: A CSV claim of a metric (written with a few decimals) may differ from the recomputed value
#: by this much and still be the same value.
QUALITY_ABS_TOL = 1e-4
KEY = ["variant_id", "phase", "run_index"]


def per_view(fn: Callable[[RunView], pl.DataFrame]) -> Callable[[RunView], pl.DataFrame]:
    """Compute FN once per view; the result lives as long as the view (a weak key), so a
    long benchmark or a server does not keep old runs' frames alive."""
    cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @wraps(fn)
    def wrapper(view: RunView) -> pl.DataFrame:
        if view not in cache:
            cache[view] = fn(view)
        return cache[view]

    wrapper.cache_clear = cache.clear  # type: ignore[attr-defined]
    return wrapper


def loc_row(row: Any) -> str:
    return f"row {row}"


def pass_name(variant: str, phase: str, run: int) -> str:
    return f"{variant}/{phase}-{run}"


@per_view
def indexed_outputs(view: RunView) -> pl.DataFrame:
    """The output lines with `exp` (the expected ID's position among the distinct expected
    IDs, null for an ID outside the list) and `ok` (valid line with a declared label)."""
    assert view.outputs is not None and view.expected_ids is not None
    exp = (view.expected_ids.select("id").unique(maintain_order=True)
           .with_row_index("exp").with_columns(pl.col("exp").cast(pl.Int64)))
    ok = (pl.col("valid") & pl.col("label").is_in(list(view.classes))).fill_null(False)
    return view.outputs.join(exp, on="id", how="left", maintain_order="left").with_columns(
        ok.alias("ok"))


@per_view
def pass_stats(view: RunView) -> pl.DataFrame:
    """One row per output file: `variant_id, phase, run_index, file, lines, observed_ids,
    unique_ids, n_dup, dup_ids, n_missing, missing_ids, n_extra, extra_ids, n_invalid,
    invalid_lines, n_bad_label, bad_label_lines, usable, dup_line, extra_line (first line of
    a repeated or an extra ID), quality_value, ids_match,
    format_valid, quality_ok, accepted` (lists hold at most 20 items).

    Integer positions of the expected IDs carry the set work: no cross join of files x IDs;
    the ID lists are built only for the few files that have a fault."""
    o = indexed_outputs(view)
    idx = view.output_index
    assert view.expected_ids is not None
    exp_ids = view.expected_ids.select("id").unique(maintain_order=True)["id"]
    n_exp = exp_ids.len()
    base = o.group_by("file").agg(
        pl.len().alias("lines"),
        pl.col("id").is_not_null().sum().alias("observed_ids"),
        pl.col("id").drop_nulls().n_unique().alias("unique_ids"),
        pl.col("exp").drop_nulls().n_unique().alias("n_present"),
        pl.col("id").filter(pl.col("id").is_not_null() & pl.col("exp").is_null())
        .n_unique().alias("n_extra"),
        pl.col("line").filter(~pl.col("valid")).head(20).alias("invalid_lines"),
        (~pl.col("valid")).sum().alias("n_invalid"),
        pl.col("line").filter(pl.col("valid") & ~pl.col("ok")).head(20).alias("bad_label_lines"),
        (pl.col("valid") & ~pl.col("ok")).sum().alias("n_bad_label"),
        pl.col("ok").sum().alias("usable"),
    )
    out = idx.join(base, on="file", how="left")
    counts = ["lines", "observed_ids", "unique_ids", "n_present", "n_extra", "n_invalid",
              "n_bad_label", "usable"]
    out = out.with_columns([pl.col(c).fill_null(0).cast(pl.Int64) for c in counts])
    out = out.with_columns(
        (pl.col("observed_ids") - pl.col("unique_ids")).alias("_surplus"),
        (n_exp - pl.col("n_present")).alias("n_missing"))
    # ID lists, only for the files with a fault
    dup_files = out.filter(pl.col("_surplus") > 0)["file"]
    dups = (o.filter(pl.col("file").is_in(dup_files.implode()) & pl.col("id").is_not_null())
            .group_by("file", "id").agg(pl.len(), pl.col("line").sort().slice(1, 1).first())
            .filter(pl.col("len") > 1)
            .group_by("file").agg(pl.len().alias("n_dup"),
                                  pl.col("id").sort().head(20).alias("dup_ids"),
                                  pl.col("line").min().alias("dup_line")))
    miss_files = out.filter(pl.col("n_missing") > 0).select("file")
    exp_frame = exp_ids.to_frame().with_row_index("exp").with_columns(
        pl.col("exp").cast(pl.Int64))
    present = o.filter(pl.col("file").is_in(miss_files["file"].implode())
                       & pl.col("exp").is_not_null()).select("file", "exp")
    missing = (miss_files.join(exp_frame, how="cross")
               .join(present, on=["file", "exp"], how="anti")
               .group_by("file").agg(pl.col("id").sort().head(20).alias("missing_ids")))
    extra = (o.filter(pl.col("id").is_not_null() & pl.col("exp").is_null())
             .group_by("file").agg(pl.col("id").unique().sort().head(20).alias("extra_ids"),
                                   pl.col("line").min().alias("extra_line")))
    for part in (dups, missing, extra):
        out = out.join(part, on="file", how="left")
    out = out.with_columns(pl.col("n_dup").fill_null(0).cast(pl.Int64))
    out = out.with_columns([pl.col(c).fill_null([]) for c in
                            ("dup_ids", "missing_ids", "extra_ids", "invalid_lines",
                             "bad_label_lines")])
    has_dups = bool(dup_files.len())
    out = out.join(_quality(view, o, idx.select("file"), list(view.classes), has_dups),
                   on="file", how="left")
    m = view.manifest or {}
    qr = m.get("quality_rule") or {}
    thr = qr.get("threshold")
    floor = None
    if isinstance(qr.get("reference"), dict) and qr.get("tolerance") is not None:
        floor = qr["reference"].get("value", 0) - qr["tolerance"]
    q = pl.col("quality_value")
    quality_ok = q.is_not_null()
    if thr is not None:
        quality_ok = quality_ok & (q >= thr - EPS)
    if floor is not None:
        quality_ok = quality_ok & (q >= floor - EPS)
    out = out.with_columns(
        ((pl.col("n_dup") == 0) & (pl.col("n_missing") == 0) & (pl.col("n_extra") == 0))
        .alias("ids_match"),
        ((pl.col("n_invalid") == 0) & (pl.col("n_bad_label") == 0)).alias("format_valid"),
        quality_ok.fill_null(False).alias("quality_ok"),
    ).drop("_surplus", "n_present")
    return out.with_columns(
        (pl.col("ids_match") & pl.col("format_valid") & pl.col("quality_ok")).alias("accepted"))


def _quality(view: RunView, o: pl.DataFrame, files: pl.DataFrame,
             classes: list[str], has_dups: bool = True) -> pl.DataFrame:
    empty = files.with_columns(pl.lit(None, dtype=pl.Float64).alias("quality_value"))
    if view.references is None or not classes:
        return empty
    metric = ((view.manifest or {}).get("quality_rule") or {}).get("metric", "macro_f1")
    exp = (view.expected_ids.select("id").unique(maintain_order=True)
           .with_row_index("exp").with_columns(pl.col("exp").cast(pl.Int64)))
    refs = (view.references.unique(subset="id", keep="first")
            .join(exp, on="id", how="inner").select("exp", pl.col("label").alias("ref")))
    if refs.height == 0:
        return empty
    # A prediction: the first valid line with a declared label for an expected ID.
    preds = o.filter(pl.col("ok") & pl.col("exp").is_not_null()).select(
        "file", "exp", pl.col("label").alias("pred"))
    if has_dups:  # only then can one ID have several predictions
        preds = preds.unique(subset=["file", "exp"], keep="first", maintain_order=True)
    scored = preds.join(refs, on="exp", how="inner")
    cls = pl.DataFrame({"cls": classes})
    nref = refs.group_by(pl.col("ref").alias("cls")).agg(pl.len().alias("nref"))
    tp = (scored.filter(pl.col("pred") == pl.col("ref"))
          .group_by("file", pl.col("ref").alias("cls")).agg(pl.len().alias("tp")))
    npred = scored.group_by("file", pl.col("pred").alias("cls")).agg(pl.len().alias("npred"))
    per = (files.join(cls, how="cross").join(nref, on="cls", how="left")
           .join(tp, on=["file", "cls"], how="left").join(npred, on=["file", "cls"], how="left"))
    per = per.with_columns([pl.col(c).fill_null(0).cast(pl.Float64)
                            for c in ("tp", "nref", "npred")])
    denom = pl.col("npred") + pl.col("nref")
    per = per.with_columns(
        pl.when(denom > 0).then(2 * pl.col("tp") / denom).otherwise(0.0).alias("f1"),
        (denom > 0).alias("present"))
    values = {
        "macro_f1": pl.col("f1").filter(pl.col("present")).mean(),
        "weighted_f1": (pl.col("f1") * pl.col("nref")).sum() / pl.col("nref").sum(),
        "micro_f1": 2 * pl.col("tp").sum() / (pl.col("npred").sum() + pl.col("nref").sum()),
        "accuracy": pl.col("tp").sum() / pl.col("nref").sum(),
    }
    q = per.group_by("file").agg(values.get(metric, values["macro_f1"]).alias("qv"))
    usable = o.group_by("file").agg(pl.col("ok").sum().alias("_u"))
    return (files.join(q, on="file", how="left").join(usable, on="file", how="left")
            .select("file", pl.when(pl.col("_u").fill_null(0) > 0).then(pl.col("qv"))
                    .alias("quality_value")))


@per_view
def rows_with_stats(view: RunView) -> pl.DataFrame:
    """CSV rows joined with their output file's recomputed stats (inner join); the
    recomputed columns that share a CSV name are prefixed `re_`."""
    assert view.results is not None
    stats = pass_stats(view).rename({c: f"re_{c}" for c in
                                     ("observed_ids", "quality_value", "ids_match",
                                      "format_valid")})
    return view.results.join(stats, on=KEY, how="inner")


def variant_accepted(view: RunView) -> pl.DataFrame:
    """Per variant (from the CSV): distinct corpus revisions with a recomputed accepted pass."""
    r = rows_with_stats(view)
    return (view.results.select("variant_id").unique()
            .join(r.filter(pl.col("accepted")).group_by("variant_id").agg(
                pl.col("corpus_revision").n_unique().alias("accepted_corpora")),
                on="variant_id", how="left")
            .with_columns(pl.col("accepted_corpora").fill_null(0)))


def claimed_true(row: dict, *columns: str) -> bool:
    return any(row.get(c) is True for c in columns)


def note_sources(view: RunView) -> list[tuple[str, str | None, str, str | None]]:
    """Every free-text note: (artifact, location, text, variant_id or None)."""
    out: list[tuple[str, str | None, str, str | None]] = []
    if view.results is not None:
        for row, variant, note in view.results.select("row", "variant_id", "notes").filter(
                pl.col("notes").is_not_null() & (pl.col("notes") != "")).iter_rows():
            out.append(("resultats-bruts.csv", loc_row(row), note, variant))
    m = view.manifest or {}
    if isinstance(m.get("notes"), str) and m["notes"]:
        out.append(("manifest.json", "/notes", m["notes"], None))
    return out


NUMBER = re.compile(r"(?<![\w.])\d[\d_,]*(?:\.\d+)?")


def numbers_in(text: str) -> list[float]:
    vals = []
    for tok in NUMBER.findall(text):
        try:
            vals.append(float(tok.replace(",", "").replace("_", "")))
        except ValueError:
            continue
    return vals
