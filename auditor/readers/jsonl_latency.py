"""JSONL answers that each carry their own latency (protocol B's trial outputs,
`{"id": "...", "label": "...", "latency_ms": 0.12}`, `schemas/trial-output-line.schema.json`),
decoded vectorized.

A trial holds thousands of answers (the sequence repeated inside its energy window) and a run
tens of trials. A byte gate (polars literal and pattern counts over all files at once) picks
the files whose every line has exactly one string `id`, one string `label`, one numeric
`latency_ms` and no other key; those are parsed together by one `pl.read_ndjson` call, and a
file that fails the gate or the checks after the parse (an empty id or label, a negative or
non-finite latency) goes line by line: each line parsed strictly (`strict_json`) and
validated against the schema, so a bad line is named with its message.

Frame: `file_no` (the file's position in the input list), `line`, `id`, `label`,
`latency_ms`, `valid` (parses and matches the schema), `error` (why not); one row per physical
line (a final newline ends the last line, it does not start an empty one).
"""

from __future__ import annotations

from typing import Any

import polars as pl

import schemas
from auditor.readers import strict_json
from auditor.readers.base import json_pointer

SCHEMA_KIND = "trial_output_line"
_SCHEMA = {"id": pl.String, "label": pl.String, "latency_ms": pl.Float64}
_FRAME = {
    "file_no": pl.Int64,
    "line": pl.Int64,
    "id": pl.String,
    "label": pl.String,
    "latency_ms": pl.Float64,
    "valid": pl.Boolean,
    "error": pl.String,
}


def _gates(blobs: list[bytes]) -> list[int | None]:
    """Per file, its line count when it may take the fast path, else None. One `"id"`, one
    `"label"` and one `"latency_ms"` token per line, the first two string-valued and the
    third a JSON number, and three keys in all per line (so no other key, no repeated or
    `\\u`-escaped key: those go line by line, where `strict_json` refuses them)."""
    if not blobs:
        return []
    t = pl.col("t")

    def literal(pattern: str) -> pl.Expr:
        return t.str.count_matches(pattern, literal=True).cast(pl.Int64)

    def regex(pattern: str) -> pl.Expr:
        return t.str.count_matches(pattern).cast(pl.Int64)

    texts = []
    for b in blobs:
        try:
            texts.append(b.decode("utf-8"))
        except UnicodeDecodeError:
            texts.append("")  # the line-by-line path names the bad line
    df = (
        pl.DataFrame({"t": texts})
        .with_row_index("k")
        .with_columns(
            (literal("\n") + pl.when(t.str.ends_with("\n")).then(0).otherwise(1)).alias("n")
        )
    )
    ok = (
        (t.str.len_bytes() > 0)
        & (regex(r'"id":\s?"') == pl.col("n"))
        & (literal('"id"') == pl.col("n"))
        & (regex(r'"label":\s?"') == pl.col("n"))
        & (literal('"label"') == pl.col("n"))
        & (regex(r'"latency_ms":\s?-?[0-9]') == pl.col("n"))
        & (literal('"latency_ms"') == pl.col("n"))
        & (literal('":') == 3 * pl.col("n"))
        & ~t.str.contains("\\u", literal=True)
        & ~t.str.contains("\r", literal=True)
        & ~t.str.contains("\n\n", literal=True)
        & ~t.str.starts_with("\n")
    )
    out: list[int | None] = [None] * len(blobs)
    for k, n in df.filter(ok).select("k", "n").iter_rows():
        out[k] = n
    return out


def _fast(blobs: list[bytes], counts: list[int]) -> pl.DataFrame | None:
    """The lines of BLOBS (all gated) in one parse, or None when any value is off."""
    try:
        # polars reads a list of in-memory documents too; its stubs name paths only
        df = pl.read_ndjson(
            blobs if len(blobs) > 1 else blobs[0],  # type: ignore[arg-type]
            schema=_SCHEMA,
        ).rechunk()
    except pl.exceptions.PolarsError:
        return None
    if df.height != sum(counts):
        return None
    bad = df.select(
        (pl.col("id").str.len_bytes().fill_null(0) == 0)
        | (pl.col("label").str.len_bytes().fill_null(0) == 0)
        | pl.col("latency_ms").is_null()
        | ~pl.col("latency_ms").is_finite()
        | (pl.col("latency_ms") < 0)
    ).to_series()
    return None if bad.any() else df


def _slow(data: bytes, file_no: int) -> pl.DataFrame:
    """Every physical line of one file, parsed strictly and validated against the schema."""
    validator = schemas.validator(SCHEMA_KIND)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    rows = []
    for n, raw in enumerate(lines, start=1):
        row: dict[str, Any] = {
            "file_no": file_no,
            "line": n,
            "id": None,
            "label": None,
            "latency_ms": None,
            "valid": False,
            "error": None,
        }
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            rows.append({**row, "error": "not valid UTF-8"})
            continue
        obj, problem = strict_json.loads(text)
        if problem is not None:
            where = f", column {problem.column}" if problem.column else ""
            rows.append({**row, "error": f"{problem.message}{where}"})
            continue
        err = next(iter(sorted(validator.iter_errors(obj), key=lambda e: list(e.path))), None)
        if isinstance(obj, dict):
            row.update(
                id=obj.get("id") if isinstance(obj.get("id"), str) else None,
                label=obj.get("label") if isinstance(obj.get("label"), str) else None,
            )
            lat = obj.get("latency_ms")
            if isinstance(lat, int | float) and not isinstance(lat, bool):
                row["latency_ms"] = float(lat)
        if err is not None:
            row["error"] = f"{err.message} at {json_pointer(err.absolute_path) or '/'}"
        else:
            row["valid"] = True
        rows.append(row)
    return pl.DataFrame(rows, schema=_FRAME, orient="row")


def decode_many(blobs: list[bytes]) -> pl.DataFrame:
    """The lines of every file in BLOBS, in file then line order (frame above)."""
    gates = _gates(blobs)
    fast = [k for k, g in enumerate(gates) if g is not None]
    slow = [k for k, g in enumerate(gates) if g is None]
    parts: list[pl.DataFrame] = []
    if fast:
        counts = [gates[k] or 0 for k in fast]
        df = _fast([blobs[k] for k in fast], counts)
        if df is None:  # one file spoils the shared parse: each alone, the bad ones slowly
            for k, n in zip(fast, counts, strict=True):
                one = _fast([blobs[k]], [n])
                if one is None:
                    slow.append(k)
                else:
                    parts.append(_frame(one, [k], [n]))
        else:
            parts.append(_frame(df, fast, counts))
    parts += [_slow(blobs[k], k) for k in sorted(slow)]
    if not parts:
        return pl.DataFrame(schema=_FRAME)
    return pl.concat(parts).sort("file_no", "line") if len(parts) > 1 else parts[0]


def _frame(df: pl.DataFrame, files: list[int], counts: list[int]) -> pl.DataFrame:
    where = pl.DataFrame(
        {"file_no": files, "n": counts}, schema={"file_no": pl.Int64, "n": pl.Int64}
    ).select(
        pl.col("file_no").repeat_by("n").explode(),
        pl.int_ranges(1, pl.col("n") + 1).explode().cast(pl.Int64).alias("line"),
    )
    return (
        pl.concat([where, df], how="horizontal")
        .with_columns(pl.lit(True).alias("valid"), pl.lit(None, dtype=pl.String).alias("error"))
        .select(list(_FRAME))
    )
