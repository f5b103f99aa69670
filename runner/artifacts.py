"""Writing and validating the run directory's files.

Every JSON file and JSONL line is validated against its schema in `schemas/`, and the CSV
against the table schema, before the run is declared complete; the manifest lists the SHA-256
of every other file. The run is built in `<RUN_DIR>.partial-<pid>` and renamed into place only
at the very end, so a killed runner never leaves a directory that looks complete.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import schemas
from runner.errors import RunnerError
from runner.revisions import file_sha256

_INT = re.compile(r"^-?\d+$")
_NUM = re.compile(r"^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")


def write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_lines(path: Path, lines: Iterable[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(line + "\n" for line in lines)


def cell(value: Any) -> str:
    """A CSV cell: empty for not recorded, true/false, floats with a decimal point."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def csv_text(rows: Sequence[dict[str, Any]], table: str = schemas.RESULTS_TABLE) -> str:
    """A run-dir CSV (`resultats-bruts.csv` by default): header exactly as its table schema
    (RUN_DIR.md), RFC 4180, QUOTE_MINIMAL, CRLF."""
    columns = schemas.table_columns(table)
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    w.writerow(columns)
    for row in rows:
        unknown = set(row) - set(columns)
        if unknown:
            raise RunnerError(f"internal: CSV row has unknown column(s) {sorted(unknown)}")
        w.writerow([cell(row.get(c)) for c in columns])
    return buf.getvalue()


def write_csv(
    path: Path, rows: Sequence[dict[str, Any]], table: str = schemas.RESULTS_TABLE
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(csv_text(rows, table), encoding="utf-8", newline="")


def check_csv(path: Path, table: str = schemas.RESULTS_TABLE) -> None:
    """Header byte for byte, then every cell against its type and empty_allowed."""
    fields = schemas.table(table)["fields"]
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    header = [f["name"] for f in fields]
    if not rows or rows[0] != header:
        raise RunnerError(f"internal: {path.name}: header differs from the table schema")
    for n, row in enumerate(rows[1:], 1):
        if len(row) != len(fields):
            raise RunnerError(
                f"internal: {path.name} row {n}: {len(row)} cells, expected {len(fields)}"
            )
        for value, spec in zip(row, fields, strict=True):
            problem = _cell_problem(value, spec)
            if problem:
                raise RunnerError(
                    f"internal: {path.name} row {n}, column {spec['name']}: {problem} ({value!r})"
                )


def _cell_problem(value: str, spec: dict[str, Any]) -> str | None:
    if value == "":
        return None if spec.get("empty_allowed") else "empty cell where a value is required"
    kind = spec["type"]
    if kind == "integer" and not _INT.match(value):
        return "not an integer"
    if kind == "number" and not _NUM.match(value):
        return "not a number with a decimal point"
    if kind == "boolean" and value not in ("true", "false"):
        return "not true/false"
    if kind in ("integer", "number"):
        x = float(value)
        if "minimum" in spec and x < spec["minimum"]:
            return f"below the minimum {spec['minimum']}"
        if "maximum" in spec and x > spec["maximum"]:
            return f"above the maximum {spec['maximum']}"
    if "enum" in spec:
        allowed = {str(e) for e in spec["enum"]}
        if value not in allowed:
            return f"not one of {sorted(allowed)}"
    if "pattern" in spec and not re.fullmatch(spec["pattern"], value):
        return f"does not match {spec['pattern']}"
    if spec.get("format") == "date-time":
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return "not an ISO 8601 date-time"
        if moment.tzinfo is None:
            return "a date-time without a UTC offset"
    return None


def validate(kind: str, obj: Any, where: str) -> None:
    errors = sorted(schemas.validator(kind).iter_errors(obj), key=lambda e: e.path)
    if errors:
        e = errors[0]
        pointer = "/" + "/".join(str(p) for p in e.absolute_path)
        raise RunnerError(
            f"internal: {where} does not match {schemas.SCHEMA_FILES[kind]} "
            f"at {pointer}: {e.message}"
        )


def validate_json_file(path: Path, kind: str, rel: str) -> None:
    validate(kind, json.loads(path.read_text(encoding="utf-8")), rel)


def validate_jsonl_file(path: Path, kind: str, rel: str) -> None:
    v = schemas.validator(kind)
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            obj = json.loads(line)
            if not v.is_valid(obj):
                validate(kind, obj, f"{rel} line {n}")


@dataclass(frozen=True)
class Layout:
    """Which schema covers which file of one protocol's run dir (docs/run-dir*.md).

    `rules` are (pattern, format, kind), first match wins; a pattern is an exact relative path
    or an `fnmatch` glob (`*` also crosses `/`). Formats: `json` (one document), `jsonl`
    (every line), `table` (a CSV against its table schema), `json-raw` (a tool's own JSON,
    only checked to parse). `raw` patterns name files kept as their tool wrote them, with no
    schema (weights, plain ID lists). With `strict`, a file matching neither is a fault, so a
    new artifact cannot slip into a run dir without a schema or a documented reason."""

    rules: tuple[tuple[str, str, str], ...]
    raw: tuple[str, ...] = ()
    strict: bool = False

    def rule_for(self, rel: str) -> tuple[str, str] | None:
        for pattern, fmt, kind in self.rules:
            if rel == pattern or fnmatch.fnmatchcase(rel, pattern):
                return fmt, kind
        return None

    def is_raw(self, rel: str) -> bool:
        return any(rel == p or fnmatch.fnmatchcase(rel, p) for p in self.raw)


#: Protocol A (docs/run-dir.md): exact paths first, then folders.
PROTOCOL_A = Layout(
    rules=(
        ("resultats-bruts.csv", "table", schemas.RESULTS_TABLE),
        ("corpus/references.jsonl", "jsonl", "reference_line"),
        ("timeline.jsonl", "jsonl", "timeline_entry"),
        ("environment.json", "json", "environment"),
        ("economics/offers.json", "json", "offers"),
        ("checks/set-check.json", "json", "set_check"),
        ("claims.json", "json", "claims"),
        ("manifest.json", "json", "manifest"),
        ("outputs/*", "jsonl", "output_line"),
        ("traces/memory/*", "json", "memory_trace"),
        ("evidence/placement/*", "json", "placement"),
    )
)


def validate_run_dir(root: Path, layout: Layout = PROTOCOL_A) -> None:
    """Validate every file the layout covers; raise RunnerError at the first fault."""
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        rule = layout.rule_for(rel)
        if rule is None:
            if layout.strict and not layout.is_raw(rel):
                raise RunnerError(f"internal: {rel} is covered by no schema of the run dir layout")
            continue
        fmt, kind = rule
        if fmt == "table":
            check_csv(path, kind)
        elif fmt == "jsonl":
            validate_jsonl_file(path, kind, rel)
        elif fmt == "json":
            validate_json_file(path, kind, rel)
        else:  # json-raw: a tool's own format; it must at least be JSON
            try:
                json.loads(path.read_bytes())
            except ValueError as exc:
                raise RunnerError(f"internal: {rel} is not JSON ({exc})") from None


def artifact_hashes(root: Path) -> dict[str, str]:
    """Every file but manifest.json -> its SHA-256, relative '/'-separated paths."""
    return {
        p.relative_to(root).as_posix(): file_sha256(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).as_posix() != "manifest.json"
    }
