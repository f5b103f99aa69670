"""The quality metric of protocol A, recomputed per output file from its lines and the
references, and the quality rule it is judged by (A2.4).

Metric conventions (documented for reviewers; the same as scikit-learn with
`zero_division=0`): a prediction is the first valid line for an expected ID whose label is a
declared class; an expected ID without one counts as wrong (a false negative of its reference
class, no false positive). Per class c: F1 = 2·TP / (predicted_c + reference_c), 0 when both
are 0. `macro_f1` = unweighted mean of F1 over the declared classes present in the references
or the predictions; `weighted_f1` = mean weighted by reference support; `micro_f1` =
2·ΣTP / (Σpredicted + Σreference); `accuracy` = ΣTP / number of reference IDs. A pass with no
valid line has no value (empty cell).

Pure functions of frames (no view): `passes.pass_stats` calls them with its per-file counts.
"""

from __future__ import annotations

from typing import Any

import polars as pl

EPS = 1e-9
"""The slack of a comparison of a recomputed metric with the rule's threshold or floor."""
QUALITY_ABS_TOL = 1e-4
"""A CSV claim of a metric (written with a few decimals) may differ from the recomputed value
by this much and still be the same value."""


def class_counts(classes: list[str]) -> list[pl.Expr]:
    """Per class k: `_npred{k}` (scored predictions of class k) and `_tp{k}` (those right).
    A scored prediction: a usable line (`ok`) for an expected ID that has a reference."""
    scored = pl.col("ok") & pl.col("ref").is_not_null()
    out = []
    for k, c in enumerate(classes):
        pred_c = scored & (pl.col("label") == c)
        out += [
            pred_c.sum().alias(f"_npred{k}"),
            (pred_c & (pl.col("ref") == c)).sum().alias(f"_tp{k}"),
        ]
    return out


def quality_values(
    lines: pl.DataFrame,
    stats: pl.DataFrame,
    exp: pl.DataFrame,
    classes: list[str],
    metric: str,
    dup_nos: pl.Series,
) -> pl.Series:
    """`quality_value` for each row of STATS (per output file, `file_no`, `usable` and the
    `class_counts`), by METRIC, against the references of EXP (`passes.index_expected`).
    The files DUP_NOS answer an ID twice: their counts are redone from LINES (the indexed
    output lines) with each ID's first usable line as its prediction."""
    none = pl.Series("quality_value", [None] * stats.height, dtype=pl.Float64)
    refs = exp.filter(pl.col("ref").is_not_null())
    if not classes or refs.height == 0:
        return none
    cols = [f"_{w}{k}" for k in range(len(classes)) for w in ("npred", "tp")]
    counts = stats.select("file_no", *cols)
    if dup_nos.len():  # one ID answered twice: its first usable line is the prediction
        preds = lines.filter(
            pl.col("file_no").is_in(dup_nos.implode()) & pl.col("ok") & pl.col("exp").is_not_null()
        ).unique(subset=["file_no", "exp"], keep="first", maintain_order=True)
        redo = (
            dup_nos.to_frame()
            .join(preds.group_by("file_no").agg(class_counts(classes)), on="file_no", how="left")
            .with_columns([pl.col(c).fill_null(0).cast(counts[c].dtype) for c in cols])
        )
        counts = counts.update(redo, on="file_no")
    long = pl.concat(
        [
            counts.select(
                "file_no",
                pl.lit(c).alias("cls"),
                pl.col(f"_tp{k}").alias("tp"),
                pl.col(f"_npred{k}").alias("npred"),
            )
            for k, c in enumerate(classes)
        ]
    )
    nref = refs.group_by(pl.col("ref").alias("cls")).agg(pl.len().alias("nref"))
    per = long.join(nref, on="cls", how="left", maintain_order="left").with_columns(
        [pl.col(c).fill_null(0).cast(pl.Float64) for c in ("tp", "nref", "npred")]
    )
    denom = pl.col("npred") + pl.col("nref")
    per = per.with_columns(
        pl.when(denom > 0).then(2 * pl.col("tp") / denom).otherwise(0.0).alias("f1"),
        (denom > 0).alias("present"),
    )
    values = {
        "macro_f1": pl.col("f1").filter(pl.col("present")).mean(),
        "weighted_f1": (pl.col("f1") * pl.col("nref")).sum() / pl.col("nref").sum(),
        "micro_f1": 2 * pl.col("tp").sum() / (pl.col("npred").sum() + pl.col("nref").sum()),
        "accuracy": pl.col("tp").sum() / pl.col("nref").sum(),
    }
    q = per.group_by("file_no", maintain_order=True).agg(
        values.get(metric, values["macro_f1"]).alias("qv")
    )
    return (
        stats.select("file_no", "usable")
        .join(q, on="file_no", how="left", maintain_order="left")
        .select(pl.when(pl.col("usable") > 0).then(pl.col("qv")).alias("quality_value"))
        .to_series()
    )


def metric_of(manifest: dict[str, Any] | None) -> str:
    """The metric the manifest's quality rule names (`macro_f1` when it names none)."""
    return ((manifest or {}).get("quality_rule") or {}).get("metric", "macro_f1")


def meets_rule(manifest: dict[str, Any] | None) -> pl.Expr:
    """Whether `quality_value` meets the manifest's quality rule: it has a value, at least
    the threshold, and at least the reference value less the tolerance where both are
    declared (each within `EPS`)."""
    qr = (manifest or {}).get("quality_rule") or {}
    thr = qr.get("threshold")
    floor = None
    if isinstance(qr.get("reference"), dict) and qr.get("tolerance") is not None:
        floor = qr["reference"].get("value", 0) - qr["tolerance"]
    q = pl.col("quality_value")
    ok = q.is_not_null()
    if thr is not None:
        ok = ok & (q >= thr - EPS)
    if floor is not None:
        ok = ok & (q >= floor - EPS)
    return ok.fill_null(False).alias("quality_ok")
