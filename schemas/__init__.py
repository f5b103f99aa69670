"""The artifact formats shared by `runner` (which writes run directories) and `auditor`
(which re-validates them): one JSON Schema (2020-12) per artifact, plus the table schema of
`resultats-bruts.csv`.

This package is the single source of truth for formats. It only locates and loads the
schema files; it holds no logic of either tool, so both can depend on it without depending
on each other.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

#: Artifact kind -> schema file name. `docs/run-dir.md` says which path holds which kind.
SCHEMA_FILES: dict[str, str] = {
    "manifest": "manifest.schema.json",
    "output_line": "output-line.schema.json",
    "reference_line": "reference-line.schema.json",
    "timeline_entry": "timeline-entry.schema.json",
    "memory_trace": "memory-trace.schema.json",
    "placement": "placement.schema.json",
    "environment": "environment.schema.json",
    "offers": "offers.schema.json",
    "set_check": "set-check.schema.json",
    "run_config": "run-config.schema.json",
    "audit_result": "audit-result.schema.json",
    # what `audit` commands print with --format json (and their errors, on stderr)
    "audit_rules": "audit-rules.schema.json",
    "verify_result": "verify-result.schema.json",
    "cost_result": "cost-result.schema.json",
    "error": "error.schema.json",
    # protocol B evidence our runner writes (the auditor's readers read the same files)
    "runner_power_record": "runner-power-record.schema.json",
    "torch_placement": "torch-placement.schema.json",
    "ort_placement": "ort-placement.schema.json",
}

RESULTS_TABLE_FILE = "resultats-bruts.table.json"


@cache
def load(kind: str) -> dict[str, Any]:
    """The parsed JSON Schema of one artifact kind (a key of `SCHEMA_FILES`)."""
    return _read_json(SCHEMA_FILES[kind])


@cache
def validator(kind: str) -> Draft202012Validator:
    """A compiled validator for one artifact kind; cached, so validating many lines is cheap."""
    schema = load(kind)
    cls = validator_for(schema, default=Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


@cache
def results_table() -> dict[str, Any]:
    """The table schema of `resultats-bruts.csv`: columns in order, types, empty allowed."""
    return _read_json(RESULTS_TABLE_FILE)


def results_columns() -> tuple[str, ...]:
    """The CSV header, in order, exactly as RUN_DIR.md fixes it."""
    return tuple(field["name"] for field in results_table()["fields"])


def _read_json(name: str) -> dict[str, Any]:
    return json.loads(resources.files(__name__).joinpath(name).read_text(encoding="utf-8"))
