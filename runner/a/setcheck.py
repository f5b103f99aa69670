"""The set, format and quality check of every output file (A2), computed from the files as
written (read back from disk), never from what the runner believes it wrote; archived as
`checks/set-check.json` (A2.6).

For each output file: the lines carrying an ID (`observed_ids`), the distinct IDs, the
duplicated, missing and extra ones (a set comparison, not a line count, A2.5), the lines that
are not a JSON object with a non-empty string `id` and a `label` among the declared classes
(`invalid_lines`, 1-based). `ids_match` means exactly the expected set, each once;
`format_valid` means no invalid line (as the schema words it: every line, so an empty file is
not malformed; it fails `ids_match`). The quality value is computed over the expected IDs
whenever the file has at least one usable answer, a missing answer counting as wrong; it is
empty only when there is no usable answer (the table schema's "no usable output").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import polars as pl

#: The metrics, computed over the classes present in references or answers (the usual
#: convention, as scikit-learn's default `labels`).
METRICS = ("macro_f1", "accuracy", "micro_f1", "weighted_f1")


def read_lines(path: Path) -> pl.DataFrame:
    """One row per line of a JSONL file: line number (1-based), parsed id and label (null
    where the line is not a JSON object or lacks the field or it is not a string)."""
    # bytes, not read_text: universal newlines would split a line at a lone "\r"
    text = path.read_bytes().decode("utf-8", errors="replace") if path.is_file() else ""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final line end, not an empty line
    frame = pl.DataFrame({"raw": pl.Series(lines, dtype=pl.String)}).with_row_index("line", 1)
    obj = pl.col("raw").str.strip_chars().str.contains(r"^\{.*\}$")

    # a string field's JSON path value; a number or object is not a string id or label
    def field(name: str) -> pl.Expr:
        quoted = pl.col("raw").str.contains(rf'"{name}"\s*:\s*"')
        return (
            pl.when(obj & quoted)
            .then(pl.col("raw").str.json_path_match(f"$.{name}"))
            .otherwise(None)
            .alias(name)
        )

    return frame.select("line", field("id"), field("label"))


def check_output(
    path: Path,
    rel: str,
    expected: pl.Series,
    classes: tuple[str, ...],
    references: pl.DataFrame,
    metric: str,
) -> dict[str, Any]:
    """The set-check record of one output file (without variant/phase/run_index)."""
    lines = read_lines(path)
    with_id = lines.filter(pl.col("id").is_not_null())
    counts = with_id.group_by("id").len()
    exp = pl.DataFrame({"id": expected}).unique()
    duplicates = counts.filter(pl.col("len") > 1)["id"].sort().to_list()
    missing = exp.join(counts, on="id", how="anti")["id"].sort().to_list()
    extra = counts.join(exp, on="id", how="anti")["id"].sort().to_list()
    usable = (
        pl.col("id").is_not_null()
        & (pl.col("id") != "")
        & pl.col("label").is_in(list(classes)).fill_null(False)
    )
    invalid = lines.filter(~usable)
    ids_match = not duplicates and not missing and not extra
    format_valid = invalid.height == 0
    value = None
    ok = lines.filter(usable)
    if ok.height:
        # over the expected IDs: a missing answer counts against the metric; a repeated ID
        # counts once (its first line); an extra ID is not graded (A0201/A0202 catch those)
        preds = (
            ok.sort("line")
            .unique(subset="id", keep="first")
            .select("id", pl.col("label").alias("pred"))
        )
        refs = (
            references.select("id", pl.col("label").alias("ref"))
            .unique(subset="id", keep="first")
            .join(exp, on="id", how="semi")
        )
        value = quality_grid(refs.join(preds, on="id", how="left"), metric)
    return {
        "output_file": rel,
        "lines": lines.height,
        "observed_ids": with_id.height,
        "unique_ids": counts.height,
        "duplicate_ids": duplicates,
        "missing_ids": missing,
        "extra_ids": extra,
        "invalid_lines": invalid["line"].to_list(),
        "ids_match": ids_match,
        "format_valid": format_valid,
        "quality_value": value,
    }


def quality(pred: pl.Series, ref: pl.Series, metric: str) -> float:
    """The metric of single-label predictions against references of the same length."""
    return quality_grid(pl.DataFrame({"ref": ref, "pred": pred}), metric)


def quality_grid(grid: pl.DataFrame, metric: str) -> float:
    """Metric over a frame of `ref` and `pred` (null: no answer, which is never right).
    F1 per class over the classes in the references or the answers: 2 tp / (npred + nref);
    macro = their mean, weighted = weighted by nref, micro = 2 sum tp / (sum npred +
    sum nref), accuracy = sum tp / sum nref."""
    if grid.height == 0:
        return 0.0
    tp = (
        grid.filter(pl.col("pred") == pl.col("ref"))
        .group_by("ref")
        .len()
        .rename({"ref": "cls", "len": "tp"})
    )
    nref = grid.group_by("ref").len().rename({"ref": "cls", "len": "nref"})
    npred = (
        grid.filter(pl.col("pred").is_not_null())
        .group_by("pred")
        .len()
        .rename({"pred": "cls", "len": "npred"})
    )
    per = (
        nref.join(npred, on="cls", how="full", coalesce=True)
        .join(tp, on="cls", how="left")
        .with_columns(pl.col("tp", "nref", "npred").fill_null(0).cast(pl.Float64))
        .with_columns(f1=2 * pl.col("tp") / (pl.col("npred") + pl.col("nref")))
        .sort("cls")
    )  # a fixed summation order: equal answers give equal bits
    # Float64 columns: their sums and mean are floats (polars types them as any scalar)
    total = {c: cast(float, per[c].sum()) for c in ("tp", "nref", "npred")}
    if metric == "macro_f1":
        return float(cast(float, per["f1"].mean()))
    if metric == "weighted_f1":
        return float(cast(float, (per["f1"] * per["nref"]).sum()) / total["nref"])
    if metric == "micro_f1":
        return float(2 * total["tp"] / (total["npred"] + total["nref"]))
    if metric == "accuracy":
        return float(total["tp"] / total["nref"])
    raise ValueError(f"unknown metric {metric}")


def accepted(value: float | None, threshold: float, reference: float, tolerance: float) -> bool:
    """A1.1 / A2.4 with `tolerance_direction: max_decrease`."""
    return value is not None and value >= threshold and value >= reference - tolerance
