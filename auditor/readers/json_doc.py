"""One JSON document (manifest, environment, offers, traces, placement records): parsed, then
validated against its JSON Schema in `schemas/`.

`read` returns the parsed document whatever the schema says (a caller may still want the
run's identity from a manifest that breaks its schema), with every schema violation as a
fault carrying its JSON pointer; callers treat a document with error faults as unusable for
rules."""

from __future__ import annotations

import json
from typing import Any

import schemas
from auditor.readers.base import Fault, Read, json_pointer, shorten, utf8_fault

MAX_SCHEMA_FAULTS = 20
"""A broken document can break its schema in thousands of places; the first ones say enough."""


def read(data: bytes, *, name: str, schema: str | None = None, label: str | None = None
         ) -> Read[Any]:
    """Parse DATA as one JSON document and validate it against the schema kind SCHEMA (a key
    of `schemas.SCHEMA_FILES`), if given; LABEL names the schema in messages."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Read(None, (utf8_fault(data, exc, name),))
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        return Read(None, (Fault(name, f"not valid JSON: {exc.msg}", line=exc.lineno,
                                 column=exc.colno, kind="syntax"),))
    if schema is None:
        return Read(doc)
    return Read(doc, schema_faults(doc, schema, name, label=label))


def schema_faults(doc: Any, schema: str, name: str, *, line: int | None = None,
                  limit: int = MAX_SCHEMA_FAULTS, label: str | None = None
                  ) -> tuple[Fault, ...]:
    """The schema violations of DOC (at most LIMIT), sorted by place; LINE when DOC is one
    line of a JSONL file; LABEL names the schema in the messages (default: its kind)."""
    errors = sorted(schemas.validator(schema).iter_errors(doc),
                    key=lambda e: list(map(str, e.absolute_path)))
    label = label or schema
    return tuple(
        Fault(name, f"does not match {label} schema: {e.message}",
              line=line, pointer=json_pointer(e.absolute_path), kind="schema",
              value=_text(shorten(e.instance)))
        for e in errors[:limit])


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
