"""A small JSONL file of records (a timeline: one line per pass), each line validated against
a JSON Schema: the records that parse and match, each with its line number, plus one fault
per bad line. For large files of `{"id", "label"}` lines use `jsonl_id_label`, which is
vectorized."""

from __future__ import annotations

import json
from typing import Any

from auditor.readers.base import Fault, Read, utf8_fault
from auditor.readers.json_doc import schema_faults

FAULTS_PER_LINE = 3


def read(data: bytes, *, name: str, schema: str | None = None, label: str | None = None
         ) -> Read[list[tuple[int, dict[str, Any]]]]:
    """(line, record) for every good line; blank lines are skipped."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Read(None, (utf8_fault(data, exc, name),))
    records: list[tuple[int, dict[str, Any]]] = []
    faults: list[Fault] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            faults.append(Fault(name, f"not valid JSON: {exc.msg}", line=n, column=exc.colno,
                                kind="syntax"))
            continue
        bad = schema_faults(obj, schema, name, line=n, limit=FAULTS_PER_LINE,
                            label=label) if schema else ()
        if not isinstance(obj, dict) and not bad:
            bad = (Fault(name, f"not a JSON object but {type(obj).__name__}", line=n,
                         kind="schema"),)
        if bad:
            faults.extend(bad)
            continue
        records.append((n, obj))
    return Read(records, tuple(faults))
