"""JSONL files whose lines are objects with string `id` and `label` (pass outputs,
references), decoded vectorized.

The outputs of a run can be millions of lines. A gate (one anchored regex per file, polars,
the files matched in parallel) picks the files whose every line is a `CANONICAL_LINE`: an
object of exactly the keys `id` and `label` (and maybe a plain finite `score`), both
non-empty strings written without escapes. Those are parsed together by one multi-threaded
`pl.read_ndjson` call; any other file goes line by line, so a bad line is pinpointed with
its message. A line with a repeated key, a key written with `\\u` escapes, a number beyond 64
bits or not finite, a BOM or a control character is never canonical: `strict_json` reads it
(keys compared decoded) and refuses it with its line.

Frames: `line`, `id`, `label`, `valid` (parses and matches the line schema), `error` (why
not), one row per physical line; `decode_many` adds `file_no` (the file's position).
"""

from __future__ import annotations

import re

import polars as pl

import schemas
from auditor.readers import strict_json
from auditor.readers.base import json_pointer

_ID_LABEL = pl.Struct({"id": pl.String, "label": pl.String})


def decode_id_label_lines(data: bytes, schema_kind: str) -> pl.DataFrame:
    """Decode JSONL bytes whose lines must be objects with string `id` and `label`.

    Returns `line`, `id`, `label`, `valid`, `error`, one row per physical line (a final
    newline ends the last line; it does not start an empty one). The fast path decodes all
    lines in one polars call; lines that fail a cheap vectorized guard (required fields as
    JSON strings, non-empty, nothing else to check) are the only ones given to jsonschema,
    which writes the message. When the file has a line that is not JSON at all, or bytes that
    are not UTF-8, a per-line fallback finds exactly those lines."""
    fast = _decode_fast(data)
    if fast is not None:
        return fast
    try:
        text = data.decode("utf-8")
        bad_utf8: set[int] = set()
    except UnicodeDecodeError:
        chunks = data.split(b"\n")
        bad_utf8 = set()
        for i, c in enumerate(chunks, start=1):
            try:
                c.decode("utf-8")
            except UnicodeDecodeError:
                bad_utf8.add(i)
        text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    raw = pl.Series("raw", lines, dtype=pl.String)
    n = len(lines)
    parse_err: list[str | None] | None = None
    try:
        if bad_utf8:
            raise pl.exceptions.ComputeError("bad utf-8")
        dec = raw.str.json_decode(dtype=_ID_LABEL)
        if dec.len() != n:  # polars drops the lines when all are blank: go line by line
            raise pl.exceptions.ComputeError("json_decode changed the line count")
    except pl.exceptions.PolarsError:
        ids: list[str | None] = [None] * n
        labels: list[str | None] = [None] * n
        parse_err = [None] * n
        for i, line in enumerate(lines):  # error path only: pinpoint the bad lines
            if i + 1 in bad_utf8:
                parse_err[i] = "not valid UTF-8"
                continue
            obj, problem = strict_json.loads(line)
            if problem is not None:
                parse_err[i] = _problem_text(problem)
                continue
            if not isinstance(obj, dict):
                parse_err[i] = f"not a JSON object but {type(obj).__name__}"
                continue
            idv, lab = obj.get("id"), obj.get("label")
            ids[i] = idv if isinstance(idv, str) else None
            labels[i] = lab if isinstance(lab, str) else None
        dec = pl.DataFrame(
            {"id": pl.Series(ids, dtype=pl.String), "label": pl.Series(labels, dtype=pl.String)}
        ).to_struct("s")
    df = (
        pl.DataFrame({"raw": raw})
        .with_columns(
            dec.struct.field("id").alias("id"),
            dec.struct.field("label").alias("label"),
            pl.Series("perr", parse_err if parse_err is not None else [None] * n, dtype=pl.String),
        )
        .with_row_index("line", offset=1)
        .with_columns(pl.col("line").cast(pl.Int64))
    )
    guard = (
        pl.col("perr").is_null()
        & pl.col("raw").str.contains(r'"id"\s*:\s*"')
        & pl.col("raw").str.contains(r'"label"\s*:\s*"')
        # one key token each: a nested or repeated key could hide a non-string value
        & (pl.col("raw").str.count_matches('"id"', literal=True) == 1)
        & (pl.col("raw").str.count_matches('"label"', literal=True) == 1)
        # two keys in all: any other (an escaped `"\u0069d"`, a repeat) goes to the strict path
        & (pl.col("raw").str.count_matches('":', literal=True) == 2)
        & ~pl.col("raw").str.contains(r"\\u[dD]")  # a surrogate escape: the strict path
        & (pl.col("id").str.len_chars() > 0).fill_null(False)
        & (pl.col("label").str.len_chars() > 0).fill_null(False)
        & ~pl.col("raw").str.contains('"score"', literal=True)
    )
    df = df.with_columns(guard.alias("valid"))
    suspects = df.filter(~pl.col("valid") & pl.col("perr").is_null())
    msgs: dict[int, str | None] = {}
    if suspects.height:
        v = schemas.validator(schema_kind)
        strict_errors: dict[int, str] = {}
        for line, s in zip(suspects["line"], suspects["raw"], strict=True):
            obj, problem = strict_json.loads(s)
            if problem is not None:
                strict_errors[line] = _problem_text(problem)
                continue
            err = next(iter(sorted(v.iter_errors(obj), key=lambda e: e.path)), None)
            msgs[line] = (
                None
                if err is None
                else (f"{err.message} at {json_pointer(err.absolute_path) or '/'}")
            )
        if strict_errors:  # refused by the strict parse: a parse error, not a schema one
            fix = pl.DataFrame(
                {"line": list(strict_errors), "e": list(strict_errors.values())},
                schema={"line": pl.Int64, "e": pl.String},
            )
            df = (
                df.join(fix, on="line", how="left")
                .with_columns(pl.coalesce("perr", "e").alias("perr"))
                .drop("e")
            )
    if msgs:
        fix = pl.DataFrame(
            {"line": list(msgs), "serr": list(msgs.values())},
            schema={"line": pl.Int64, "serr": pl.String},
        )
        df = df.join(fix, on="line", how="left")
        df = df.with_columns(
            (
                pl.col("valid")
                | (
                    pl.col("perr").is_null()
                    & pl.col("line").is_in(fix["line"].implode())
                    & pl.col("serr").is_null()
                )
            ).alias("valid"),
        )
    else:
        df = df.with_columns(pl.lit(None, dtype=pl.String).alias("serr"))
    return df.select(
        "line",
        pl.when(pl.col("valid") | pl.col("perr").is_null()).then(pl.col("id")).alias("id"),
        pl.when(pl.col("valid") | pl.col("perr").is_null()).then(pl.col("label")).alias("label"),
        "valid",
        pl.when(pl.col("valid"))
        .then(None)
        .otherwise(pl.coalesce("perr", "serr", pl.lit("invalid line")))
        .alias("error"),
    )


_W = r"[ \t\r]*"
"""JSON whitespace inside one line (a line feed ends the line)."""
_PLAIN_STRING = r'"[^"\\\x00-\x1f]+"'
"""A non-empty JSON string with no escape and no control character: its text is its value."""
_NUMBER = r"-?(?:0|[1-9][0-9]{0,17})(?:\.[0-9]{1,40})?(?:[eE][-+]?[0-9]{1,2})?"
"""A JSON number surely finite and, when an integer, within 64 bits (at most 18 digits, an
exponent of at most two): what `strict_json` takes without a second look."""


def _fields(first: str, second: str) -> str:
    return (
        rf'{_W}"{first}"{_W}:{_W}{_PLAIN_STRING}{_W},'
        rf'{_W}"{second}"{_W}:{_W}{_PLAIN_STRING}'
    )


_LINE = (
    rf"{_W}\{{(?:{_fields('id', 'label')}|{_fields('label', 'id')})"
    rf'(?:{_W},{_W}"score"{_W}:{_W}{_NUMBER})?{_W}\}}{_W}'
)
CANONICAL_LINE = rf"(?m)^{_LINE}$"
"""One output or reference line the fast path takes: an object of exactly the keys `id` and
`label` (either order; then maybe `score`, a plain finite number), both non-empty strings
written without escapes, JSON whitespace only. Keys are written plainly, so none can repeat
(also not `\\u`-escaped); no value can be beyond 64 bits, not finite, a lone surrogate or
anything but what it reads as. No match spans a line (no class takes a line feed) and each
match is anchored at a line's start: the count of matches is the count of such lines."""

_CANONICAL = re.compile(CANONICAL_LINE)
CANONICAL_FILE = rf"\A(?:{_LINE}\n)*{_LINE}\n?\z"
"""A file whose every line is a `CANONICAL_LINE` (a final newline ends the last line): one
anchored forward scan, what `_gates` asks polars."""


def _gate(data: bytes) -> tuple[int, bool] | None:
    """(line count, has a `score` key) when every line of DATA is a `CANONICAL_LINE`, else
    None (an empty file, a blank line, bytes that are not UTF-8, any other line: the line-by-
    line path names the lines). Python's `re`, the reference for the vectorized `_gates`."""
    if not data:
        return None
    n = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if sum(1 for _ in _CANONICAL.finditer(text)) != n:
        return None
    return n, b'"score"' in data


def _problem_text(problem: strict_json.JsonProblem) -> str:
    where = f", column {problem.column}" if problem.column else ""
    return f"{problem.message}{where}"


def _gates(blobs: list[bytes]) -> list[tuple[int, bool] | None]:
    """`_gate` of many files at once: one anchored polars regex match per file
    (`CANONICAL_FILE`, a lazy DFA, off the GIL), the files spread over as many chunks as
    polars has threads so they are matched in parallel. A file that is not UTF-8 fails the
    gate (the line-by-line path names the line)."""
    if not blobs:
        return []
    t = pl.col("t")
    try:
        series = pl.Series("t", blobs, dtype=pl.Binary).cast(pl.String)
    except pl.exceptions.ComputeError:  # some file is not UTF-8: gate it out, keep the rest
        series = pl.Series("t", [b if _is_utf8(b) else b"" for b in blobs], dtype=pl.Binary).cast(
            pl.String
        )
    frame = series.to_frame()
    step = -(-len(blobs) // max(1, min(pl.thread_pool_size(), len(blobs))))
    if step < len(blobs):  # one chunk per thread: polars counts the chunks in parallel
        frame = pl.concat([frame.slice(i, step) for i in range(0, len(blobs), step)], rechunk=False)
    df = frame.select(
        (
            t.str.count_matches("\n", literal=True).cast(pl.Int64)
            + pl.when(t.str.ends_with("\n")).then(0).otherwise(1)
        ).alias("n"),
        t.str.contains(CANONICAL_FILE).alias("canonical"),
        t.str.contains('"score"', literal=True).alias("scored"),
        (t.str.len_bytes() > 0).alias("some"),
    )
    out: list[tuple[int, bool] | None] = [None] * len(blobs)
    for k, (n, canonical, scored, some) in enumerate(df.iter_rows()):
        if some and canonical:
            out[k] = (n, scored)
    return out


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _read_fast(
    data: bytes | list[bytes], n: int, scored: bool | None = None
) -> pl.DataFrame | None:
    """`id`, `label` of the N lines of DATA (one JSONL document, or several read in order in
    one multi-threaded `pl.read_ndjson` call, without copying them into one), or None."""
    schema: dict[str, type[pl.DataType]] = {"id": pl.String, "label": pl.String}
    if scored is None:
        scored = b'"score"' in data if isinstance(data, bytes) else True
    if scored:
        schema["score"] = pl.Float64  # a string or boolean score fails the parse
    try:  # read_ndjson rejects bad UTF-8 itself: the slow path then names the line
        # One chunk: every later join and group-by would otherwise pay for the many.
        df = pl.read_ndjson(data, schema=schema).rechunk()  # type: ignore[arg-type]
    except pl.exceptions.PolarsError:
        return None
    # A NaN or infinite score: the strict path says which line. (A null is a file without
    # scores read with others that have them; the gate refuses "score": null.)
    if (
        scored
        and not df.select((pl.col("score").is_null() | pl.col("score").is_finite()).all()).item()
    ):
        return None
    df = df.select("id", "label")
    # One pass per column: a null (absent or JSON null) or empty value has length 0.
    shortest = pl.min_horizontal(pl.col("id", "label").str.len_bytes().fill_null(0).min())
    if df.height != n or not df.height or df.select(shortest).item() == 0:
        return None
    return df


def _decode_fast(data: bytes) -> pl.DataFrame | None:
    gate = _gate(data)
    df = None if gate is None else _read_fast(data, *gate)
    if df is None or gate is None:
        return None
    return df.select(
        pl.int_range(1, gate[0] + 1, dtype=pl.Int64).alias("line"),
        "id",
        "label",
        pl.lit(True).alias("valid"),
        pl.lit(None, dtype=pl.String).alias("error"),
    )


def decode_many(blobs: list[bytes], schema_kind: str) -> pl.DataFrame:
    """Decode many JSONL files at once: `file_no` (position in BLOBS), `line`, `id`, `label`,
    `valid`, `error`. Files that pass the fast gate are parsed together in one `read_ndjson`
    call (no copy into one buffer); if that call fails (a file that passed the gate does not parse),
    each of them alone, so only the faulty ones take the line-by-line path."""
    gated = list(zip(range(len(blobs)), blobs, _gates(blobs), strict=True))
    fast = [(k, b, g[0]) for k, b, g in gated if g is not None]
    slow = [k for k, _, g in gated if g is None]
    parts: list[pl.DataFrame] = []
    if fast:
        total = sum(n for _, _, n in fast)
        scored = any(g[1] for _, _, g in gated if g is not None)
        df = _read_fast([b for _, b, _ in fast], total, scored)
        if df is None:
            for k, b, _ in fast:
                one = _decode_fast(b)
                if one is None:
                    slow.append(k)
                else:
                    parts.append(one.select(pl.lit(k, dtype=pl.Int64).alias("file_no"), pl.all()))
        else:
            counts = pl.DataFrame(
                {"file_no": [k for k, _, _ in fast], "n": [n for _, _, n in fast]},
                schema={"file_no": pl.Int64, "n": pl.Int64},
            )
            where = counts.select(
                pl.col("file_no").repeat_by("n").explode(),
                pl.int_ranges(1, pl.col("n") + 1).explode().alias("line"),
            )
            parts.append(
                pl.concat([where, df], how="horizontal").with_columns(
                    pl.lit(True).alias("valid"), pl.lit(None, dtype=pl.String).alias("error")
                )
            )
    for k in sorted(slow):
        parts.append(
            decode_id_label_lines(blobs[k], schema_kind).select(
                pl.lit(k, dtype=pl.Int64).alias("file_no"), pl.all()
            )
        )
    if not parts:
        return pl.DataFrame(
            schema={
                "file_no": pl.Int64,
                "line": pl.Int64,
                "id": pl.String,
                "label": pl.String,
                "valid": pl.Boolean,
                "error": pl.String,
            }
        )
    return pl.concat(parts).sort("file_no", "line") if len(parts) > 1 else parts[0]
