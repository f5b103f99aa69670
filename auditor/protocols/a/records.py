"""The records of two JSONL artifacts as protocol A's view (`view.py`) keeps them: a
timeline entry as one typed row of `TIMELINE_SCHEMA` (`timeline_row`), and the inputs line
the fast path reads without a per-line schema call (`INPUT_LINE`, `plain_input`)."""

from __future__ import annotations

from typing import Any

import polars as pl

from auditor.readers import jsonl_records

TIMELINE_SCHEMA = {
    "line": pl.Int64,
    "order_index": pl.Int64,
    "variant_id": pl.String,
    "phase": pl.String,
    "run_index": pl.Int64,
    "status": pl.String,
    "started_at": pl.String,
    "ended_at": pl.String,
    "elapsed_seconds": pl.Float64,
    "load_seconds": pl.Float64,
    "pid": pl.Int64,
    "fresh_process": pl.Boolean,
    "iterations": pl.Int64,
    "incident_kind": pl.String,
    "incident_message": pl.String,
    "output_file": pl.String,
    "memory_trace": pl.String,
    "placement": pl.String,
    "torch_threads": pl.Int64,
}
"""The timeline as a frame: `line`, then the fields of each entry (`incident` flattened)."""


def timeline_row(n: int, obj: dict[str, Any]) -> dict[str, Any]:
    """The timeline entry OBJ of line N as a row of `TIMELINE_SCHEMA` (elapsed or load
    seconds that are no number, torch_threads that is no integer: null)."""
    inc = obj.get("incident") or {}
    return {
        "line": n,
        "order_index": obj["order_index"],
        "variant_id": obj["variant_id"],
        "phase": obj["phase"],
        "run_index": obj["run_index"],
        "status": obj["status"],
        "started_at": obj["started_at"],
        "ended_at": obj["ended_at"],
        "elapsed_seconds": _num(obj.get("elapsed_seconds")),
        "load_seconds": _num(obj.get("load_seconds")),
        "pid": obj["pid"],
        "fresh_process": obj["fresh_process"],
        "iterations": obj.get("iterations"),
        "incident_kind": inc.get("kind"),
        "incident_message": inc.get("message"),
        "output_file": obj.get("output_file"),
        "memory_trace": obj.get("memory_trace"),
        "placement": obj.get("placement"),
        "torch_threads": _int(obj.get("torch_threads")),
    }


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


INPUT_LINE = jsonl_records.id_text_line("text")
"""An inputs line read without a per-line parse (`jsonl_records.read_ids`)."""


def plain_input(obj: Any) -> bool:
    """An inputs line that surely matches input-line.schema.json (a string `id`, not empty,
    and a string `text`): the schema is asked only about the others."""
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("id"), str)
        and obj["id"] != ""
        and isinstance(obj.get("text"), str)
    )


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
