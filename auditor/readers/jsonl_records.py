"""A small JSONL file of records (a timeline: one line per pass; the evaluation inputs), each
line parsed strictly (`strict_json`: no repeated key, no NaN, no number beyond 64 bits, bounded
nesting) and validated against a JSON Schema: the records that parse and match, each with its
line number, plus one fault per bad line. For large files of `{"id", "label"}` lines use
`jsonl_id_label`, which is vectorized."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from auditor.readers import strict_json
from auditor.readers.base import Fault, Read, utf8_fault
from auditor.readers.json_doc import problem_fault, schema_faults, too_large

FAULTS_PER_LINE = 3
MAX_BYTES = 256 << 20
"""The largest file read record by record (a timeline is kilobytes, an inputs file of a
million texts a few hundred megabytes)."""
MAX_BAD_LINES = 1000
"""Faults kept per file: a file of garbage says enough in its first thousand lines."""


def read(data: bytes, *, name: str, schema: str | None = None, label: str | None = None,
         surely_valid: Callable[[Any], bool] | None = None
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
            faults.append(Fault(name, f"more than {MAX_BAD_LINES} bad lines; the rest of the "
                                "file is not read", line=n, kind="limit"))
            break
        obj, problem = strict_json.loads(line)
        if problem is not None:
            faults.append(problem_fault(problem, name, line=n))
            continue
        fast = surely_valid is not None and surely_valid(obj)
        bad = schema_faults(obj, schema, name, line=n, limit=FAULTS_PER_LINE,
                            label=label) if schema and not fast else ()
        if not isinstance(obj, dict) and not bad:
            bad = (Fault(name, f"not a JSON object but {type(obj).__name__}", line=n,
                         kind="schema"),)
        if bad:
            faults.extend(bad)
            continue
        records.append((n, obj))
    return Read(records, tuple(faults))
