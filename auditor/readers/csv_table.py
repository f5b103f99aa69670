"""RFC 4180 CSV tables typed by a table schema in `schemas/` (`resultats-bruts.table.json`,
and protocol B's tables): the raw cells as strings exactly as written, the typed frame, and
every format fault as data (kind, row, line, column name, value).

Fault kinds: `limit` (a file larger than `MAX_BYTES`, not parsed; or a cell longer than the
`csv` module's field size limit, `csv.field_size_limit()`, 131,072 characters by default: the
table is not read past it), `encoding`, `quoting`, `header` (also a data row that repeats
the header: it is left out), `cells`, `type` (also an integer beyond 64 bits, where the
field is not `"unbounded": true`, or a number that overflows to infinity: reported, never
read as "not recorded"), `decimal_comma`, `empty`, `duplicate_row` (two rows for one primary
key), `line_ending` (a warning: RFC 4180 ends records with CRLF). An unbounded integer field
(a seed) is typed as its canonical decimal text.
The typed frame is None when the table's structure is broken (quoting, header, a row of the
wrong width); cell-level faults leave it typed, the bad cells null.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from typing import Any

import polars as pl

from auditor.readers.base import Fault, Read

MAX_BYTES = 256 << 20
"""The largest table parsed (one row per pass is kilobytes; this is a million rows)."""
_INT = r"^-?[0-9]+$"
_NUM = r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$"
_DECIMAL_COMMA = r"^-?[0-9]+,[0-9]+$"
_MAX_DIGITS = 100
"""The longest integer of unbounded size (`"unbounded": true` in the table schema) read."""


def _why_not(value: str, ftype: str, unbounded: bool = False) -> str:
    """What a cell written in the type's syntax still gets wrong (reported, never nulled)."""
    if ftype == "integer" and re.fullmatch(_INT, value):
        return (
            f" (more than {_MAX_DIGITS} digits)"
            if unbounded
            else " (beyond the 64-bit integer range)"
        )
    if ftype == "number" and re.fullmatch(_NUM, value):
        return " (not a finite number: its magnitude overflows a 64-bit float)"
    return ""


def _short(value: str, limit: int = 80) -> str:
    return value if len(value) <= limit else f"{value[:limit]}... ({len(value)} characters)"


_FIELD_LIMIT = re.compile(r"field larger than field limit \((\d+)\)")
"""The `csv.Error` of a cell longer than `csv.field_size_limit()` (CPython's wording); the
limit it names is the one the reader applied."""


def read_csv_records(text: str) -> tuple[list[tuple[int, list[str]]], dict | None]:
    """RFC 4180 records of a CSV text: (start line, cells). Quoted fields may hold commas,
    doubled quotes and line breaks. Returns the records parsed before any fault, and that
    fault (`kind`, `line`, `message`, `row`, `value`) or None: `quoting` (`line` where the
    reader stopped), or `limit` for a cell longer than the reader's field size limit (`line`
    where that record starts, `row` its data row, `value` the limit, in words)."""
    records: list[tuple[int, list[str]]] = []
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    try:
        for cells in reader:
            records.append((start, cells))
            start = reader.line_num + 1
    except csv.Error as exc:
        big = _FIELD_LIMIT.search(str(exc))
        if big:
            limit = int(big.group(1))
            row = len(records) or None  # records[0] is the header: this is data row len()
            where = f"data row {row}" if row else "the header"
            return records, {
                "kind": "limit",
                "line": start,
                "row": row,
                "value": f"a cell of more than {limit:,} characters",
                "message": f"a cell of the record at line {start} ({where}) is "
                f"longer than {limit:,} characters, the CSV reader's "
                "size limit for one cell: the table is not read past "
                "it",
            }
        return records, {
            "kind": "quoting",
            "line": reader.line_num,
            "row": None,
            "value": None,
            "message": f"CSV quoting error: {exc}",
        }
    return records, None


@dataclass(frozen=True)
class Table:
    """A CSV table: `raw` holds every cell as written (strings) plus `row` (1-based data row)
    and `line` (the physical line where the record starts); `typed` the same rows typed per
    the table schema (None when the structure is broken)."""

    raw: pl.DataFrame | None
    typed: pl.DataFrame | None


def read(data: bytes, *, name: str, table: dict[str, Any]) -> Read[Table]:
    """Parse DATA as the CSV table TABLE describes (`fields` in order, each with `name`,
    `type` (string, integer, number, boolean), optionally `enum`, `minimum`,
    `empty_allowed`; optionally `primaryKey`, a list of field names)."""
    raw, typed, faults = _parse(data, table)
    return Read(
        Table(raw, typed),
        tuple(
            Fault(
                name,
                f["message"],
                line=f["line"],
                row=f["row"],
                field=f["column"],
                value=f["value"],
                severity=f["severity"],
                kind=f["kind"],
            )
            for f in faults
        ),
    )


def _parse(
    data: bytes, table: dict[str, Any]
) -> tuple[pl.DataFrame | None, pl.DataFrame | None, list[dict]]:
    faults: list[dict] = []
    cols = [f["name"] for f in table["fields"]]

    def fault(
        kind: str,
        message: str,
        line: int | None = None,
        row: int | None = None,
        column: str | None = None,
        value: str | None = None,
        severity: str = "error",
    ) -> None:
        faults.append(
            {
                "kind": kind,
                "severity": severity,
                "row": row,
                "line": line,
                "column": column,
                "value": value,
                "message": message,
            }
        )

    if len(data) > MAX_BYTES:
        fault(
            "limit",
            f"the file is {len(data):,} bytes; the auditor parses a table up to "
            f"{MAX_BYTES:,} bytes",
            value=str(len(data)),
        )
        return None, None, faults
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        fault(
            "encoding",
            f"not valid UTF-8 (byte {exc.start})",
            line=data.count(b"\n", 0, exc.start) + 1,
            value=repr(data[exc.start : exc.start + 4]),
        )
        return None, None, faults
    if text.startswith("\ufeff"):
        fault("encoding", "starts with a byte-order mark", line=1)
        text = text[1:]
    records, qerr = read_csv_records(text)
    if qerr:
        fault(
            qerr["kind"], qerr["message"], line=qerr["line"], row=qerr["row"], value=qerr["value"]
        )
    # RFC 4180 ends records with CRLF; bare LF outside quoted fields is a (lenient) warning.
    # Quoted fields may hold bare line breaks: mask them, keeping offsets, before looking.
    unquoted = re.sub(
        r'"(?:[^"]|"")*"', lambda m: m.group().replace("\r", "\x01").replace("\n", "\x02"), text
    )
    bare = re.search(r"(?<!\r)\n", unquoted)
    if bare:
        pos = bare.start()
        fault(
            "line_ending",
            "records end with LF, not CRLF (RFC 4180)",
            severity="warning",
            line=unquoted.count("\n", 0, pos) + unquoted.count("\x02", 0, pos) + 1,
        )
    if not records:
        fault("header", "the file is empty: no header row", line=1)
        return None, None, faults
    hline, header = records[0]
    if header != cols:
        first = next(
            (i for i, (a, b) in enumerate(zip(header, cols, strict=False)) if a != b),
            min(len(header), len(cols)),
        )
        fault(
            "header",
            f"header differs from the fixed one at column {first + 1}",
            line=hline,
            column=cols[first] if first < len(cols) else None,
            value=header[first] if first < len(header) else None,
        )
        return None, None, faults
    good: list[tuple[int, int, list[str]]] = []
    for row, (line, cells) in enumerate(records[1:], start=1):
        if [c.strip().casefold() for c in cells] == cols:
            # two files appended, or a writer that restarted: the row is not a pass
            fault(
                "header",
                f"data row {row} repeats the header row (left out of the table)",
                line=line,
                row=row,
                value=",".join(cells)[:80],
            )
        elif len(cells) != len(cols):
            what = "a cell too many" if len(cells) > len(cols) else "cells missing"
            if not cells:
                what = "an empty line"
            fault(
                "cells",
                f"{len(cells)} cells instead of {len(cols)} ({what})",
                line=line,
                row=row,
                value=str(len(cells)),
            )
        else:
            good.append((row, line, cells))
    if qerr or any(f["kind"] == "cells" for f in faults):
        return None, None, faults
    raw = pl.DataFrame(
        [c for _, _, c in good], schema=dict.fromkeys(cols, pl.String), orient="row"
    ).with_columns(
        pl.Series("row", [r for r, _, _ in good], dtype=pl.Int64),
        pl.Series("line", [ln for _, ln, _ in good], dtype=pl.Int64),
    )
    fields = table["fields"]
    exprs = _checks(table)
    checked = raw.select("row", "line", *exprs)
    flags = [c for c in checked.columns if c[:2] in ("_e", "_t", "_r")]
    flagged = checked.select(flags).select(pl.all().any()).row(0, named=True)
    for i, f in enumerate(fields):
        name, ftype = f["name"], f["type"]
        if not (flagged[f"_e{i}"] or flagged[f"_t{i}"] or flagged[f"_r{i}"]):
            continue
        rows = checked.select("row", "line", f"_e{i}", f"_t{i}", f"_r{i}").with_columns(
            raw[name].alias("value"), raw[name].str.contains(_DECIMAL_COMMA).alias("comma")
        )
        for r in rows.filter(pl.col(f"_e{i}")).iter_rows(named=True):
            fault(
                "empty",
                f"{name} is empty where a value is required (empty means not recorded)",
                line=r["line"],
                row=r["row"],
                column=name,
                value="",
            )
        for r in rows.filter(pl.col(f"_t{i}")).iter_rows(named=True):
            if r["comma"] and ftype == "number":
                fault(
                    "decimal_comma",
                    f"{name} uses a decimal comma; the protocol requires a decimal point",
                    line=r["line"],
                    row=r["row"],
                    column=name,
                    value=r["value"],
                )
            else:
                why = _why_not(r["value"], ftype, bool(f.get("unbounded")))
                fault(
                    "type",
                    f"{name} is not a valid {ftype}{why}",
                    line=r["line"],
                    row=r["row"],
                    column=name,
                    value=_short(r["value"]),
                )
        for r in rows.filter(pl.col(f"_r{i}")).iter_rows(named=True):
            fault(
                "type",
                f"{name} value is out of the allowed range/values",
                line=r["line"],
                row=r["row"],
                column=name,
                value=r["value"],
            )
    typed = checked.drop(flags)
    key = table.get("primaryKey") or []
    if key:
        dup = raw.filter(pl.struct(*key).is_duplicated())
        for r in dup.iter_rows(named=True):
            fault(
                "duplicate_row",
                f"{'/'.join(str(r[k]) for k in key)} has more than one row "
                f"(the key is {', '.join(key)})",
                line=r["line"],
                row=r["row"],
                column=key[-1],
                value=r[key[-1]],
            )
    return raw, typed.select([*cols, "row", "line"]), faults


_CHECKS: dict[str, tuple[pl.Expr, ...]] = {}
"""Table schema (as canonical JSON) -> its typing and checking expressions, built once per
process (an archive's worker reads one table per run)."""


def _checks(table: dict[str, Any]) -> tuple[pl.Expr, ...]:
    """Every column of TABLE typed and checked, for one select; rows are looked at one by
    one only in the columns that have a fault (the error path). Per column, per row: `_e`
    empty where a value is required, `_t` not of the type, `_r` typed but out of the allowed
    values."""
    key = json.dumps(table, sort_keys=True)
    if key in _CHECKS:
        return _CHECKS[key]
    exprs: list[pl.Expr] = []
    for i, f in enumerate(table["fields"]):
        name, ftype = f["name"], f["type"]
        c = pl.col(name)
        empty = c == ""
        if ftype == "integer" and f.get("unbounded"):
            # an integer of any size (a seed): its canonical decimal text, leading zeros off
            ok = c.str.contains(_INT) & (c.str.len_chars() <= _MAX_DIGITS)
            typed = c.str.replace(r"^(-?)0+([0-9])", "${1}${2}").str.replace(r"^-0$", "0")
        elif ftype == "integer":
            # Digits that do not fit 64 bits cast to null: a type fault, never "not recorded".
            cast = c.cast(pl.Int64, strict=False)
            ok, typed = c.str.contains(_INT) & cast.is_not_null(), cast
        elif ftype == "number":
            # `1e999` is written like a number and is not one: a finite value or a fault.
            cast = c.cast(pl.Float64, strict=False)
            ok, typed = c.str.contains(_NUM) & cast.is_finite().fill_null(False), cast
        elif ftype == "boolean":
            ok = c.is_in(["true", "false"])
            typed = pl.when(c == "true").then(True).when(c == "false").then(False)
        else:
            ok, typed = pl.lit(True), c
        if ftype != "string":
            typed = pl.when(ok).then(typed).otherwise(None)
        bad_value = pl.lit(False)
        if "enum" in f:  # an empty cell is "not recorded" (or `_e`), never out of the enum
            bad_value = typed.is_not_null() & ~empty & ~typed.is_in(f["enum"])
        if "minimum" in f:
            bad_value = bad_value | (typed.is_not_null() & (typed < f["minimum"]))
        exprs += [
            typed.alias(name),
            (empty & pl.lit(not f.get("empty_allowed", False))).alias(f"_e{i}"),
            (~empty & ~ok).alias(f"_t{i}"),
            bad_value.fill_null(False).alias(f"_r{i}"),
        ]
    _CHECKS[key] = tuple(exprs)
    return _CHECKS[key]
