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
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView

EPS = 1e-9
#: A CSV claim of a metric (written with a few decimals) may differ from the recomputed value
#: by this much and still be the same value.
QUALITY_ABS_TOL = 1e-4
KEY = ["variant_id", "phase", "run_index"]


def pass_name(variant: str, phase: str, run: int) -> str:
    return f"{variant}/{phase}-{run}"


def index_expected(expected_ids: pl.DataFrame, references: pl.DataFrame | None
                   ) -> pl.DataFrame:
    """The distinct expected IDs in list order: `id`, `exp` (position) and `ref` (the label
    of the ID's first reference line; null without one or without references)."""
    exp = (expected_ids.select("id").unique(maintain_order=True)
           .with_row_index("exp").with_columns(pl.col("exp").cast(pl.Int64)))
    if references is None:
        return exp.with_columns(pl.lit(None, dtype=pl.String).alias("ref"))
    refs = (references.unique(subset="id", keep="first", maintain_order=True)
            .select("id", pl.col("label").alias("ref")))
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
    return view.outputs.join(expected_index(view), on="id", how="left",
                             maintain_order="left").with_columns(_usable(view.classes))


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
        *_class_counts(list(classes)),
    ]


def output_file_stats(lines: pl.DataFrame, exp: pl.DataFrame, classes: Sequence[str]
                      ) -> tuple[pl.DataFrame, pl.Series]:
    """The `_file_aggregates` of the output files whose lines (`file_no`, `line`, `id`,
    `label`, `valid`, ...) are LINES, against EXP (`index_expected`), as they are read; and
    the `file_no` of the clean ones: one valid line with a declared label per expected ID,
    in list order. A clean file's lines are known from the list (its labels enter only the
    per-class counts), so a loader keeps the lines of the other files only."""
    o = _with_expected(lines, exp).with_columns(_usable(classes))
    rows = o.group_by("file_no", maintain_order=True).agg(_file_aggregates(classes))
    clean = rows.filter((pl.col("lines") == exp.height) & (pl.col("order_diffs") == 0)
                        & (pl.col("n_invalid") + pl.col("n_bad_label") == 0))["file_no"]
    return rows, clean


def _with_expected(lines: pl.DataFrame, exp: pl.DataFrame) -> pl.DataFrame:
    """LINES with EXP's `exp` and `ref` for each line's ID (null for an ID not in the list):
    the left join on `id`, taken by position when every line N holds the list's Nth ID (the
    usual file, in list order: no hash table). The IDs of EXP are distinct, so the row a
    line's ID matches is that one row, and both ways give the same columns."""
    at = (pl.when(pl.col("line") <= exp.height).then(pl.col("line") - 1)
          .cast(pl.Int64).alias("exp"))
    placed = lines.select(at)["exp"]
    if lines.height and placed.null_count() == 0 and (
            lines["id"] == exp["id"].gather(placed)).fill_null(False).all():
        return lines.with_columns(placed, exp["ref"].gather(placed).alias("ref"))
    return lines.join(exp, on="id", how="left", maintain_order="left")


def _class_counts(classes: list[str]) -> list[pl.Expr]:
    """Per class k: `_npred{k}` (scored predictions of class k) and `_tp{k}` (those right).
    A scored prediction: a usable line for an expected ID that has a reference."""
    scored = pl.col("ok") & pl.col("ref").is_not_null()
    out = []
    for k, c in enumerate(classes):
        pred_c = scored & (pl.col("label") == c)
        out += [pred_c.sum().alias(f"_npred{k}"),
                (pred_c & (pl.col("ref") == c)).sum().alias(f"_tp{k}")]
    return out


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
    base = (view.output_stats if view.output_stats is not None
            else o.group_by("file_no").agg(_file_aggregates(classes)))
    idx = view.output_index.with_row_index("file_no").with_columns(
        pl.col("file_no").cast(pl.Int64))
    out = idx.join(base, on="file_no", how="left", maintain_order="left")
    counts = ["lines", "observed_ids", "n_present", "n_extra", "n_invalid", "n_bad_label",
              "usable", "order_diffs"]
    out = out.with_columns([pl.col(c).fill_null(0).cast(pl.Int64) for c in counts])
    out = out.with_columns(
        (pl.col("n_present") + pl.col("n_extra")).alias("unique_ids"),
        (n_exp - pl.col("n_present")).alias("n_missing"))
    surplus = pl.col("observed_ids") > pl.col("unique_ids")
    dup_nos = out.filter(surplus)["file_no"]
    # ID lists, only for the files with a fault
    dups = (o.filter(pl.col("file_no").is_in(dup_nos.implode()) & c_id.is_not_null())
            .group_by("file_no", "id").agg(pl.len(), c_line.sort().slice(1, 1).first())
            .filter(pl.col("len") > 1)
            .group_by("file_no").agg(pl.len().alias("n_dup"),
                                     c_id.sort().head(20).alias("dup_ids"),
                                     c_line.min().alias("dup_line")))
    miss_nos = out.filter(pl.col("n_missing") > 0).select("file_no")
    exp_frame = exp_ids.to_frame().with_row_index("exp").with_columns(
        pl.col("exp").cast(pl.Int64))
    present = o.filter(pl.col("file_no").is_in(miss_nos["file_no"].implode())
                       & c_exp.is_not_null()).select("file_no", "exp")
    missing = (miss_nos.join(exp_frame, how="cross")
               .join(present, on=["file_no", "exp"], how="anti")
               .group_by("file_no").agg(c_id.sort().head(20).alias("missing_ids")))
    extra_nos = out.filter(pl.col("n_extra") > 0)["file_no"]
    extras = (o.filter(pl.col("file_no").is_in(extra_nos.implode()) & extra)
              .group_by("file_no").agg(c_id.unique().sort().head(20).alias("extra_ids"),
                                       c_line.min().alias("extra_line")))
    for part in (dups, missing, extras):
        out = out.join(part, on="file_no", how="left", maintain_order="left")
    out = out.with_columns(pl.col("n_dup").fill_null(0).cast(pl.Int64))
    out = out.with_columns([pl.col(c).fill_null([]) for c in
                            ("dup_ids", "missing_ids", "extra_ids", "invalid_lines",
                             "bad_label_lines")])
    out = out.with_columns(_quality(view, o, out, classes, dup_nos))
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
    )
    return out.select(
        "variant_id", "phase", "run_index", "file", "lines", "observed_ids", "unique_ids",
        "n_dup", "dup_ids", "dup_line", "n_missing", "missing_ids", "n_extra", "extra_ids",
        "extra_line", "n_invalid", "invalid_lines", "n_bad_label", "bad_label_lines", "usable",
        "quality_value", "ids_match", "format_valid", "quality_ok",
        (pl.col("ids_match") & pl.col("format_valid") & pl.col("quality_ok")).alias("accepted"),
        "order_diffs", "order_first_line", "order_first_id")


def _quality(view: RunView, o: pl.DataFrame, stats: pl.DataFrame, classes: list[str],
             dup_nos: pl.Series) -> pl.Series:
    """`quality_value` for each row of STATS (the per-file class counts of `pass_stats`)."""
    none = pl.Series("quality_value", [None] * stats.height, dtype=pl.Float64)
    refs = expected_index(view).filter(pl.col("ref").is_not_null())
    if view.references is None or not classes or refs.height == 0:
        return none
    metric = ((view.manifest or {}).get("quality_rule") or {}).get("metric", "macro_f1")
    cols = [f"_{w}{k}" for k in range(len(classes)) for w in ("npred", "tp")]
    counts = stats.select("file_no", *cols)
    if dup_nos.len():  # one ID answered twice: its first usable line is the prediction
        preds = (o.filter(pl.col("file_no").is_in(dup_nos.implode()) & pl.col("ok")
                          & pl.col("exp").is_not_null())
                 .unique(subset=["file_no", "exp"], keep="first", maintain_order=True))
        redo = (dup_nos.to_frame().join(preds.group_by("file_no").agg(_class_counts(classes)),
                                        on="file_no", how="left")
                .with_columns([pl.col(c).fill_null(0).cast(counts[c].dtype) for c in cols]))
        counts = counts.update(redo, on="file_no")
    long = pl.concat([counts.select("file_no", pl.lit(c).alias("cls"),
                                    pl.col(f"_tp{k}").alias("tp"),
                                    pl.col(f"_npred{k}").alias("npred"))
                      for k, c in enumerate(classes)])
    nref = refs.group_by(pl.col("ref").alias("cls")).agg(pl.len().alias("nref"))
    per = long.join(nref, on="cls", how="left", maintain_order="left").with_columns(
        [pl.col(c).fill_null(0).cast(pl.Float64) for c in ("tp", "nref", "npred")])
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
    q = per.group_by("file_no", maintain_order=True).agg(
        values.get(metric, values["macro_f1"]).alias("qv"))
    return (stats.select("file_no", "usable").join(q, on="file_no", how="left",
                                                   maintain_order="left")
            .select(pl.when(pl.col("usable") > 0).then(pl.col("qv"))
                    .alias("quality_value")).to_series())


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


def with_claims(view: RunView, per_file: pl.DataFrame, *columns: str
                ) -> Iterator[tuple[dict, bool]]:
    """Each row of PER_FILE (keyed by KEY) and whether its CSV row claims one of COLUMNS
    true. A fault in a pass the row honestly declares failed is a warning, not an error
    (A6.4); without a CSV, every fault counts as claimed."""
    if view.results is None:
        for s in per_file.iter_rows(named=True):
            yield s, True
        return
    joined = per_file.join(view.results.select([*KEY, *columns]), on=KEY, how="left")
    for s in joined.iter_rows(named=True):
        yield s, claimed_true(s, *columns)


def chosen_offer(view: RunView) -> tuple[int, dict] | None:
    """(index in the offers file, offer) of the offer the manifest names; None when it
    names none or one the offers file lacks (A0901 reports that)."""
    econ = view.manifest.get("economics") if view.manifest else None
    if not econ or view.offers is None:
        return None
    for n, o in enumerate(view.offers["offers"]):
        if o["offer_id"] == econ["offer_id"]:
            return n, o
    return None


def note_sources(view: RunView) -> list[tuple[str, dict[str, Any], str, str | None]]:
    """Every free-text note: (artifact, its place as finding keywords, text, variant_id or
    None)."""
    out: list[tuple[str, dict[str, Any], str, str | None]] = []
    if view.results is not None:
        for row, variant, note in view.results.select("row", "variant_id", "notes").filter(
                pl.col("notes").is_not_null() & (pl.col("notes") != "")).iter_rows():
            out.append(("resultats-bruts.csv", {"row": row}, note, variant))
    m = view.manifest or {}
    if isinstance(m.get("notes"), str) and m["notes"]:
        out.append(("manifest.json", {"pointer": "/notes"}, m["notes"], None))
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


# -- facts the report, the summary and the rules share -----------------------------------

def variants_accepted(view: RunView) -> set[str]:
    """Variants every pass of which the auditor recomputes as accepted (IDs exactly once,
    valid format, quality rule met), from the output files alone; a variant with a failed
    or unaccepted pass is not an accepted configuration."""
    if view.outputs is None or view.expected_ids is None:
        return set()
    per = pass_stats(view).group_by("variant_id").agg(pl.col("accepted").all())
    return {v for v, ok in per.iter_rows() if ok}


def accepted_corpora(view: RunView) -> int:
    """Distinct corpora with a pass recomputed as accepted (A9.3): the corpus revisions of
    the rows whose output file is accepted, never a count of repetitions."""
    if view.results is None or view.outputs is None or view.expected_ids is None:
        return 0
    return (rows_with_stats(view).filter(pl.col("accepted"))
            .get_column("corpus_revision").drop_nulls().n_unique())


GPU_DEVICE = re.compile(r"^(cuda|rocm|hip)(:(\d+))?$")
"""A torch device string of a GPU (ROCm builds name theirs `cuda` too); `cuda` alone is the
current device, index 0 in a run of one process per pass."""


def is_gpu_device(column: str = "device") -> pl.Expr:
    """Whether a device column names a GPU (`GPU_DEVICE`), vectorized."""
    return pl.col(column).str.strip_chars().str.to_lowercase().str.contains(
        GPU_DEVICE.pattern).fill_null(False)


def gpu_index(device: str) -> int | None:
    """The GPU index a device string names, None for a device that is not a GPU."""
    m = GPU_DEVICE.match(device.strip().lower())
    return None if m is None else int(m.group(3) or 0)


@per_view
def pass_gpus(view: RunView) -> pl.DataFrame:
    """Per pass with placement evidence, from its device map only (where the parameters and
    input batches were: `parameter_devices`, `input_devices`), never from the declared
    `gpus_used` list: `variant_id, phase, run_index, file, pid`, `devices` (every device that
    held a parameter or an input), `gpu_indices` and `gpu_count` (distinct GPUs among them),
    `gpu_models` (the driver's name of each such GPU, from the pass's identity records;
    a GPU without one is in `unidentified`), and `unbacked` (indices the declared list names
    that the device map does not show)."""
    rows = []
    for k, doc in sorted(view.placement.items()):
        held = {d for part in ("parameter_devices", "input_devices")
                for d, n in doc[part].items() if n > 0}
        indices = sorted({i for d in held if (i := gpu_index(d)) is not None})
        names = {g["index"]: g["name"] for g in doc["gpus_used"]}
        rows.append({
            "variant_id": k[0], "phase": k[1], "run_index": k[2],
            "file": view.placement_files[k], "pid": doc.get("pid"), "devices": sorted(held),
            "gpu_indices": indices, "gpu_count": len(indices),
            "gpu_models": sorted({names[i] for i in indices if i in names}),
            "unidentified": [i for i in indices if i not in names],
            "unbacked": sorted(set(names) - set(indices))})
    return pl.DataFrame(rows, schema={
        "variant_id": pl.String, "phase": pl.String, "run_index": pl.Int64, "file": pl.String,
        "pid": pl.Int64, "devices": pl.List(pl.String), "gpu_indices": pl.List(pl.Int64),
        "gpu_count": pl.Int64, "gpu_models": pl.List(pl.String),
        "unidentified": pl.List(pl.Int64), "unbacked": pl.List(pl.Int64)})


def gpus_used(view: RunView) -> int:
    """The most GPUs any pass used, from the placement device maps (0: a CPU run)."""
    counts = pass_gpus(view).get_column("gpu_count")
    return int(counts.max() or 0) if counts.len() else 0


def torch_build(view: RunView) -> str | None:
    """What the observed torch build can run on: `cpu` (a `+cpu` build, or a `cpu` runtime:
    no CUDA or ROCm was available to it), `cuda`, `rocm`, or None when the environment does
    not say (no environment, or a build without a local version and no runtime)."""
    env = view.environment
    if env is None:
        return None
    version, runtime = env["torch_version"], env["runtime"]
    local = version.partition("+")[2].lower()
    if local == "cpu" or runtime["name"] == "cpu":
        return "cpu"
    if local.startswith("rocm") or runtime["name"] == "rocm":
        return "rocm"
    if local.startswith("cu") or (runtime["name"] == "cuda" and runtime["version"]):
        return "cuda"
    return None


def gpu_models(view: RunView) -> set[str]:
    """The GPU models the passes ran on: the driver's names of the GPUs their device maps
    show (empty: CPU only)."""
    return set(pass_gpus(view).get_column("gpu_models").explode().drop_nulls().to_list())


def model_files(view: RunView) -> dict[str, str]:
    """`model/` path -> SHA-256 of the weights and tokenizer files the run keeps."""
    return {p: h for p, h in view.files_on_disk.items() if p.startswith("model/") and h}


def _num_ooms(stats: Any) -> int:
    n = stats.get("num_ooms") if isinstance(stats, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) else 0


def pass_ooms(view: RunView) -> dict[tuple[str, str, int], int]:
    """Per pass with a memory trace, the out-of-memory events PyTorch's allocator counted
    during it: `memory_stats_after.num_ooms` minus `memory_stats_before.num_ooms` (a
    counter of the process; a missing one counts 0). Only passes with at least one."""
    out = {}
    for key, doc in view.memory_traces.items():
        n = _num_ooms(doc.get("memory_stats_after")) - _num_ooms(doc.get("memory_stats_before"))
        if n > 0:
            out[key] = n
    return out


@per_view
def pass_windows(view: RunView) -> pl.DataFrame:
    """Per timeline entry: `line`, the key, `status`, `t_elapsed` (the timer's record) and
    `window` (ended_at - started_at, in seconds, from the RFC 3339 times to the ns)."""
    assert view.timeline is not None
    return view.timeline.select(
        "line", *KEY, "status", pl.col("elapsed_seconds").alias("t_elapsed"),
        ((pl.col("ended") - pl.col("started")).dt.total_nanoseconds() / 1e9).alias("window"))


@per_view
def duration_summaries(view: RunView) -> pl.DataFrame:
    """Per variant and phase, from the raw durations of the passes that completed (CSV
    `elapsed_seconds` of the rows whose timeline status is ok): `passes`, `median`, `min`,
    `max`, `mean` (seconds)."""
    assert view.results is not None and view.timeline is not None
    ok = view.timeline.filter(pl.col("status") == "ok").select(KEY).unique()
    e = pl.col("elapsed_seconds")
    return (view.results.join(ok, on=KEY, how="semi").filter(e.is_not_null())
            .group_by("variant_id", "phase")
            .agg(pl.len().alias("passes"), e.median().alias("median"), e.min().alias("min"),
                 e.max().alias("max"), e.mean().alias("mean")))


def ranking_figures(view: RunView, phase: str, statistic: str) -> dict[str, float]:
    """Per accepted variant (`variants_accepted`), the STATISTIC (`median`, `min`, `max`,
    `mean`) of its PHASE durations, in seconds, from `duration_summaries`: what a ranking of
    claims.json is recomputed from. A variant with no completed pass of that phase has none."""
    accepted = variants_accepted(view)
    return {v: value for v, ph, value in duration_summaries(view).select(
                "variant_id", "phase", statistic).iter_rows()
            if ph == phase and v in accepted and value is not None}


def ranked(figures: dict[str, float], order: str) -> list[str]:
    """FIGURES' variants in ORDER (`ascending`: the smallest first), equal figures by name."""
    sign = 1 if order == "ascending" else -1
    return sorted(figures, key=lambda v: (sign * figures[v], v))


def basis_text(basis: str | dict[str, Any]) -> str:
    """A ranking's basis in words: a typed one (claims schema version 2) spelled out, a free
    text one (version 1) as written."""
    if isinstance(basis, str):
        return basis
    return f"{basis['statistic']} {basis['phase']} {basis['measure']}, {basis['order']}"


INVISIBLE = r"[\p{Default_Ignorable_Code_Point}\p{Cf}]"
"""Characters a reader does not see: zero-width spaces and joiners, the BOM (U+FEFF), the
soft hyphen, direction marks and the other format and default-ignorable code points."""


def normalized_id(column: str = "id") -> pl.Expr:
    """An identifier as a reader would take it: compatibility-normalised (NFKC: a fullwidth
    `：` is `:`), invisible characters (`INVISIBLE`) removed, surrounding whitespace cut. Two
    IDs with the same normalized form and different bytes look the same (`ev-1`,
    `ev-1` with a U+200B or a U+FEFF, `ev-1 `) and are not."""
    return (pl.col(column).str.normalize("NFKC").str.replace_all(INVISIBLE, "")
            .str.strip_chars())


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
        normalized_id().alias("key"))
    hits = got.join(exp.unique("key", keep="first"), on="key", how="inner")
    return dict(zip(hits["id"], hits["to"], strict=True))


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


def note_matches(view: RunView, pattern: re.Pattern[str]
                 ) -> Iterator[tuple[str, dict[str, Any], str, str | None, str]]:
    """Every note sentence PATTERN finds: (artifact, place keywords, the matched text, the
    note's variant_id or None, the sentence quoted)."""
    for artifact, loc, text, variant in note_sources(view):
        for m in pattern.finditer(text):
            yield artifact, loc, m.group(), variant, sentence_at(text, m.start())
            break
