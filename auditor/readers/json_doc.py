"""One JSON document (manifest, environment, offers, traces, placement records): parsed, then
validated against its JSON Schema in `schemas/`.

`read` returns the parsed document whatever the schema says (a caller may still want the
run's identity from a manifest that breaks its schema), with every schema violation as a
fault carrying its JSON pointer; callers treat a document with error faults as unusable for
rules.

Parsing is strict and bounded (`strict_json`): a repeated key, `NaN`, a number that is not
finite or beyond 64 bits (but where the schema marks an integer of any size,
`schemas.UNBOUNDED_INTEGER`), nesting deeper than `strict_json.MAX_DEPTH` and a document larger
than `MAX_DOC_BYTES` are faults naming the line (and pointer), never a crash and never a
value silently read otherwise."""

from __future__ import annotations

import json
from typing import Any

import schemas
from auditor.readers import strict_json
from auditor.readers.base import Fault, Read, json_pointer, shorten, utf8_fault

MAX_SCHEMA_FAULTS = 20
"""A broken document can break its schema in thousands of places; the first ones say enough."""
MAX_DOC_BYTES = 64 << 20
"""The largest JSON document parsed: a manifest, trace or placement record is kilobytes."""


def read(
    data: bytes, *, name: str, schema: str | None = None, label: str | None = None
) -> Read[Any]:
    """Parse DATA as one JSON document and validate it against the schema kind SCHEMA (a key
    of `schemas.SCHEMA_FILES`), if given; LABEL names the schema in messages."""
    if len(data) > MAX_DOC_BYTES:
        return Read(None, (too_large(name, len(data), MAX_DOC_BYTES),))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Read(None, (utf8_fault(data, exc, name),))
    doc, problem = strict_json.loads(
        text, schemas.unbounded_integers(schema) if schema is not None else frozenset()
    )
    if problem is not None:
        return Read(None, (problem_fault(problem, name),))
    if schema is None:
        return Read(doc)
    return Read(doc, schema_faults(doc, schema, name, label=label))


def schema_faults(
    doc: Any,
    schema: str,
    name: str,
    *,
    line: int | None = None,
    limit: int = MAX_SCHEMA_FAULTS,
    label: str | None = None,
) -> tuple[Fault, ...]:
    """The schema violations of DOC (at most LIMIT), sorted by place; LINE when DOC is one
    line of a JSONL file; LABEL names the schema in the messages (default: its kind)."""
    errors = sorted(
        schemas.validator(schema).iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))
    )
    label = label or schema
    return tuple(
        Fault(
            name,
            f"does not match {label} schema: {e.message}",
            line=line,
            pointer=json_pointer(e.absolute_path),
            kind="schema",
            value=_text(shorten(e.instance)),
            field=_missing(e),
        )
        for e in errors[:limit]
    )


def _missing(error: Any) -> str | None:
    """The property a `required` error finds missing (the fault's `field`: the pointer names
    the object that lacks it), else None."""
    if error.validator != "required" or not isinstance(error.instance, dict):
        return None
    return next((p for p in error.validator_value if p not in error.instance), None)


def problem_fault(problem: strict_json.JsonProblem, name: str, line: int | None = None) -> Fault:
    """The fault of a JSON text `strict_json` refused; LINE when the text is one line of a
    JSONL file (the problem's own line is then 1)."""
    return Fault(
        name,
        problem.message,
        line=line if line is not None else problem.line,
        column=problem.column,
        pointer=problem.pointer or None,
        kind=problem.kind,
    )


def too_large(name: str, size: int, limit: int) -> Fault:
    """The fault of a file the auditor does not parse because it exceeds LIMIT bytes."""
    return Fault(
        name,
        f"the file is {size:,} bytes; the auditor parses such an artifact up to {limit:,} bytes",
        kind="limit",
        value=str(size),
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
