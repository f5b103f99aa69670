"""A small JSONL file of records (a timeline: one line per pass; the evaluation inputs), each
line parsed strictly (`strict_json`: no repeated key, no NaN, no number beyond 64 bits, bounded
nesting) and validated against a JSON Schema: the records that parse and match, each with its
line number, plus one fault per bad line. For large files of `{"id", "label"}` lines use
`jsonl_id_label`, which is vectorized."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from auditor.readers import strict_json
from auditor.readers.base import Fault, Read, utf8_fault
from auditor.readers.json_doc import problem_fault, schema_faults, too_large

FAULTS_PER_LINE = 3
MAX_BYTES = 256 << 20
"""The largest file read record by record (a timeline is kilobytes, an inputs file of a
million texts a few hundred megabytes)."""
MAX_BAD_LINES = 1000
"""Faults kept per file: a file of garbage says enough in its first thousand lines."""


def read(
    data: bytes,
    *,
    name: str,
    schema: str | None = None,
    label: str | None = None,
    surely_valid: Callable[[Any], bool] | None = None,
) -> Read[list[tuple[int, dict[str, Any]]]]:
    """(line, record) for every good line; blank lines are skipped. SURELY_VALID, when
    given, is a cheap test that implies the schema holds (a record it passes skips
    jsonschema, which costs tens of microseconds a line; any other goes to the schema)."""
    if len(data) > MAX_BYTES:
        return Read(None, (too_large(name, len(data), MAX_BYTES),))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Read(None, (utf8_fault(data, exc, name),))
    records: list[tuple[int, dict[str, Any]]] = []
    faults: list[Fault] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        if len(faults) >= MAX_BAD_LINES:
            faults.append(
                Fault(
                    name,
                    f"more than {MAX_BAD_LINES} bad lines; the rest of the file is not read",
                    line=n,
                    kind="limit",
                )
            )
            break
        obj, problem = strict_json.loads(line)
        if problem is not None:
            faults.append(problem_fault(problem, name, line=n))
            continue
        fast = surely_valid is not None and surely_valid(obj)
        bad = (
            schema_faults(obj, schema, name, line=n, limit=FAULTS_PER_LINE, label=label)
            if schema and not fast
            else ()
        )
        if not isinstance(obj, dict) and not bad:
            bad = (
                Fault(name, f"not a JSON object but {type(obj).__name__}", line=n, kind="schema"),
            )
        if bad:
            faults.extend(bad)
            continue
        records.append((n, obj))
    return Read(records, tuple(faults))


_W = r"[ \t\r]*"
_PLAIN_STRING = r'"([^"\\\x00-\x1f]+)"'
_JSON_STRING = (
    r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]'
    r"|\\u(?:[0-9a-cA-CeEfF][0-9a-fA-F]{3}|[dD][0-7][0-9a-fA-F]{2}))*\""
)
"""A JSON string whose escapes are all valid and none is half of a surrogate pair."""


def id_text_line(text_key: str = "text") -> str:
    """A line `read_ids` takes without a per-line parse: an object of exactly the keys `id`
    (first; a non-empty string written without escapes, capture group 1) and TEXT_KEY (any
    JSON string without surrogate escapes, quotes included, capture group 2), JSON
    whitespace only. Keys are written plainly, so none can repeat; it holds no number;
    every such line is one `strict_json` reads as that object and the input-line schema
    takes."""
    return (
        rf"^{_W}\{{{_W}\"id\"{_W}:{_W}{_PLAIN_STRING}{_W},"
        rf"{_W}\"{text_key}\"{_W}:{_W}({_JSON_STRING}){_W}\}}{_W}$"
    )


def read_ids(
    data: bytes,
    *,
    name: str,
    line_pattern: str,
    schema: str | None = None,
    label: str | None = None,
    surely_valid: Callable[[Any], bool] | None = None,
    text_key: str | None = None,
) -> Read[pl.DataFrame]:
    """`line`, `id` (and TEXT_KEY's string as `text`, when given) of every good record of
    DATA, with the faults of `read`. When every line matches LINE_PATTERN (a regex,
    anchored at both ends, whose group 1 is the ID as written and group 2 the text's JSON
    string, see `id_text_line`) the lines are matched and the columns taken vectorized, no
    Python object per line; any other file goes through `read`, line by line."""
    if 0 < len(data) <= MAX_BYTES:
        fast = _ids_fast(data, line_pattern, with_text=text_key is not None)
        if fast is not None:
            return Read(fast)
    got = read(data, name=name, schema=schema, label=label, surely_valid=surely_valid)
    if got.value is None:
        return Read(None, got.faults)
    columns: dict[str, Any] = {"line": pl.Int64, "id": pl.String}
    if text_key is None:
        rows: list[tuple[Any, ...]] = [(n, obj["id"]) for n, obj in got.value]
    else:
        columns["text"] = pl.String
        rows = [
            (n, obj["id"], t if isinstance(t := obj.get(text_key), str) else None)
            for n, obj in got.value
        ]
    return Read(pl.DataFrame(rows, schema=columns, orient="row"), got.faults)


def _ids_fast(data: bytes, line_pattern: str, *, with_text: bool) -> pl.DataFrame | None:
    try:
        text = pl.Series([data], dtype=pl.Binary).cast(pl.String)
    except pl.exceptions.ComputeError:  # not UTF-8: `read` names the line
        return None
    lines = text.str.split("\n").explode()
    if data.endswith(b"\n"):
        lines = lines.head(-1)
    ids = lines.str.extract(line_pattern, 1)
    if ids.null_count():
        return None
    frame = pl.DataFrame(
        {"line": pl.int_range(1, ids.len() + 1, dtype=pl.Int64, eager=True), "id": ids}
    )
    if with_text:  # the pattern admits only valid JSON strings: polars decodes them
        literal = lines.str.extract(line_pattern, 2)
        frame = frame.with_columns(literal.str.json_decode(pl.String).alias("text"))
    return frame
