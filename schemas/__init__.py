"""The artifact formats shared by `runner` (which writes run directories) and `auditor`
(which re-validates them): one JSON Schema (2020-12) per artifact, plus the table schemas of
the run dirs' CSV files (`resultats-bruts.csv` for protocol A, `trials.csv` and
`policies.csv` for protocol B).

This package is the single source of truth for formats. It only locates and loads the
schema files; it holds no logic of either tool, so both can depend on it without depending
on each other.

Validation is strict where JSON Schema is loose: `format` is checked (`date-time` needs the
`rfc3339-validator` package, a dependency, or it silently passes), and `integer` means an
integer literal (`5`), not a float that happens to be whole (`5.0`, `1e300`), which JSON
Schema would accept and which code counting passes or filling a 64-bit column cannot use.
"""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Callable
from functools import cache, cached_property
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

#: Artifact kind -> schema file name. `docs/run-dir.md` (protocol A) and
#: `docs/run-dir-residency.md` (protocol B) say which path holds which kind.
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
    "comparison": "comparison.schema.json",
    "archive_outcome": "archive-outcome.schema.json",
    "waivers": "waivers.schema.json",
    "claims": "claims.schema.json",
    "input_line": "input-line.schema.json",
    # what `audit` commands print with --format json (and their errors, on stderr)
    "audit_rules": "audit-rules.schema.json",
    "verify_result": "verify-result.schema.json",
    "cost_result": "cost-result.schema.json",
    "error": "error.schema.json",
    # protocol B evidence our runner writes (the auditor's readers read the same files)
    "runner_power_record": "runner-power-record.schema.json",
    "torch_placement": "torch-placement.schema.json",
    "ort_placement": "ort-placement.schema.json",
    # protocol B, the rest of the run dir `runner residency` writes (docs/run-dir-residency.md)
    "manifest_residency": "manifest-residency.schema.json",
    "prompt_line": "prompt-line.schema.json",
    "trial_output_line": "trial-output-line.schema.json",
    "residency_config": "residency-config.schema.json",
    "environment_residency": "environment-residency.schema.json",
    "gates": "gates.schema.json",
    "energy_window": "energy-window.schema.json",
    "idle_power": "idle-power.schema.json",
    # evidence from other tools, in a record we document (the auditor's readers read it)
    "windows_ml_placement": "windows-ml-placement.schema.json",
    # a Hugging Face checkpoint's config.json (its label map), kept in a run dir
    "hf_config": "hf-config.schema.json",
    # what `audit evidence --format json` prints
    "evidence_summary": "evidence-summary.schema.json",
    # replay (docs/replay.md): the manifests' `replay` section, the data-only tokenizers
    # and what `audit replay --format json` prints
    "replay_contract": "replay-contract.schema.json",
    "tokenizer_bow": "tokenizer-bow.schema.json",
    # a Hugging Face tokenizer.json, applied as data by the tokenizers library
    "tokenizer_hf": "tokenizer-hf.schema.json",
    "replay_result": "replay-result.schema.json",
    # the machine's load while measuring, in both protocols' environment.json
    "load_record": "load-record.schema.json",
    # a diagnostic run's record in either manifest (runner --off-protocol)
    "off_protocol": "off-protocol.schema.json",
    # a workload trained at run time: what made its weights (revision-kinds.json, `recipe`)
    "recipe": "recipe.schema.json",
}

RESULTS_TABLE_FILE = "resultats-bruts.table.json"
RESULTS_TABLE = "resultats-bruts"

#: CSV table name -> table schema file (columns in order, types, empty allowed).
TABLE_FILES: dict[str, str] = {
    RESULTS_TABLE: RESULTS_TABLE_FILE,
    "trials": "trials.table.json",
    "policies": "policies.table.json",
}

#: Frame kind -> frame schema file: the one polars frame each family of evidence readers
#: returns (auditor/readers/power, auditor/readers/placement).
FRAME_FILES: dict[str, str] = {
    "power_samples": "power-samples.frame.json",
    "placement_nodes": "placement-nodes.frame.json",
    # what `audit archive` writes (docs/archive.md)
    "archive_index": "archive-index.frame.json",
    "archive_findings": "archive-findings.frame.json",
}


@cache
def load(kind: str) -> dict[str, Any]:
    """The parsed JSON Schema of one artifact kind (a key of `SCHEMA_FILES`)."""
    return _read_json(SCHEMA_FILES[kind])


_RFC3339 = re.compile(
    r"""
    ^(\d{4})-(0[1-9]|1[0-2])-(\d{2})
    T(?:[01]\d|2[0123]):(?:[0-5]\d):(?:[0-5]\d)(?:\.\d+)?
    (?:Z|[+-](?:[01]\d|2[0123]):[0-5]\d)$""",
    re.VERBOSE | re.ASCII,
)
"""`rfc3339_validator.RFC3339_REGEX`, the check jsonschema gives `format: date-time`."""


def validate_rfc3339(text: str) -> bool:
    """`rfc3339_validator.validate_rfc3339`: the syntax, a year other than 0, a real day.
    The quick check uses it for `format: date-time` so that it and jsonschema agree (that
    package, and `six` with it, cost `audit check` milliseconds to import;
    tests/test_schemas_quick.py compares both on many strings)."""
    m = _RFC3339.match(text)
    if m is None:
        return False
    year, month, day = map(int, m.groups())
    return bool(year) and 1 <= day <= calendar.monthrange(year, month)[1]


def _date_time(value: str) -> bool:
    """jsonschema's `date-time` check (`jsonschema._format.is_datetime`)."""
    return validate_rfc3339(value.upper())


def _foreign(value: Any) -> bool:
    """Whether VALUE holds a Python value no JSON parser returns (a tuple, a dict subclass),
    which jsonschema-rs may convert where jsonschema sees another type: jsonschema decides."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is dict:
            stack.extend(v.values())
        elif t is list:
            stack.extend(v)
        elif t not in (str, int, float, bool, type(None)):
            return True
    return False


STRICT_INTEGER = "x-gpubench-strict-integer"
"""The keyword the quick check adds beside every `type` that allows integers and not
numbers: JSON Schema (and jsonschema-rs) takes a whole float (`5.0`) for an integer, this
package does not (`_is_integer`)."""


class _StrictInteger:
    """jsonschema-rs custom keyword `STRICT_INTEGER`: a float is no integer."""

    def __init__(self, parent_schema: Any, value: Any, schema_path: Any) -> None:
        pass

    def validate(self, instance: Any) -> None:
        if type(instance) is float:
            raise ValueError("a float where an integer literal is required")


def _strict(schema: Any) -> Any:
    """SCHEMA with `STRICT_INTEGER` beside each integer-only `type`."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items()}
    t = schema.get("type")
    types = t if isinstance(t, list) else [t]
    if "integer" in types and "number" not in types:
        out[STRICT_INTEGER] = True
    return out


def _quick(kind: str) -> Callable[[Any], bool] | None:
    """jsonschema-rs's compiled validator of the kind (`is_valid`): `$ref`s to the package's
    other schemas retrieved by `$id` only when used, `date-time` checked as jsonschema does,
    an integer only an integer literal (`STRICT_INTEGER`); None when jsonschema-rs cannot
    compile the schema (jsonschema then decides alone)."""
    import jsonschema_rs

    def retrieve(uri: str) -> dict[str, Any]:
        doc = _by_id(uri)
        if doc is None:
            raise ValueError(f"no schema {uri} in this package")  # never fetched
        return _strict(doc)

    try:
        return jsonschema_rs.validator_for(
            _strict(load(kind)),
            retriever=retrieve,
            validate_formats=True,
            ignore_unknown_formats=False,
            formats={"date-time": _date_time},
            keywords={STRICT_INTEGER: _StrictInteger},
        ).is_valid
    except (ValueError, TypeError, jsonschema_rs.ValidationError):
        return None


class Validator:
    """The validator of one artifact kind: `iter_errors`, `is_valid` and `validate` as
    jsonschema's, whose answers they are. A valid document, the common case, is recognised
    by jsonschema-rs's compiled validator (a Rust library: measured faster on the default
    run than fastjsonschema and than the hand-written fast path it replaced,
    bench/schema_bench.py), which may only ever say "valid": a document it refuses, or one
    it could judge otherwise (`_foreign`), is
    given to jsonschema, imported and compiled only then, so every error message, pointer
    and order still comes from jsonschema. Any other attribute is the jsonschema
    validator's."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._quick = _quick(kind)

    @cached_property
    def full(self) -> Draft202012Validator:
        """jsonschema's validator of the kind. The schema itself is not checked against its
        metaschema here: tests/test_schemas.py does that once, where doing it in every
        process cost `audit check` a tenth of a second."""
        from jsonschema import Draft202012Validator
        from jsonschema.validators import extend, validator_for

        schema = load(self.kind)
        base = validator_for(schema, default=Draft202012Validator)
        cls = extend(base, type_checker=base.TYPE_CHECKER.redefine("integer", _is_integer))
        return cls(schema, format_checker=base.FORMAT_CHECKER, registry=_registry())

    def certainly_valid(self, instance: Any) -> bool:
        """True when the quick check is sure INSTANCE is valid (False: ask `full`)."""
        if self._quick is None or _foreign(instance):
            return False
        try:
            return self._quick(instance)
        except (ValueError, TypeError, RecursionError, OverflowError):
            return False

    def iter_errors(self, instance: Any) -> Iterator[ValidationError]:
        if self.certainly_valid(instance):
            return iter(())
        return self.full.iter_errors(instance)

    def is_valid(self, instance: Any) -> bool:
        return self.certainly_valid(instance) or self.full.is_valid(instance)

    def validate(self, instance: Any) -> None:
        if not self.certainly_valid(instance):
            self.full.validate(instance)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.full, name)


@cache
def validator(kind: str) -> Validator:
    """The validator of one artifact kind (`Validator`); cached, so validating many lines
    is cheap."""
    return Validator(kind)


SCHEMA_BASE = "https://gpubench-audit.invalid/schemas/"
"""The `$id` of each schema is this followed by its file name."""
_KIND_OF_FILE = {file: kind for kind, file in SCHEMA_FILES.items()}


def _by_id(uri: str) -> dict[str, Any] | None:
    """The schema whose `$id` is URI, loading only that one (None when there is none)."""
    kind = _KIND_OF_FILE.get(uri.removeprefix(SCHEMA_BASE)) if uri.startswith(SCHEMA_BASE) else None
    doc = load(kind) if kind is not None else None
    return doc if doc is not None and doc.get("$id") == uri else None


@cache
def _registry() -> Registry:
    """Every schema of the package by its `$id`, so one schema can `$ref` another by file
    name (both manifests use the replay contract's); nothing is ever fetched."""
    from referencing import Registry, Resource

    return Registry().with_resources(
        (doc["$id"], Resource.from_contents(doc)) for doc in (load(kind) for kind in SCHEMA_FILES)
    )


def _is_integer(checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def date_time_is_checked() -> bool:
    """Whether `format: date-time` is enforced (its checker's package is installed)."""
    from jsonschema import Draft202012Validator

    return not Draft202012Validator.FORMAT_CHECKER.conforms("2026-13-40T99:00:00Z", "date-time")


#: Convention name -> data file: protocol conventions the runner, the auditor and the tests
#: read alike (not schemas: the documents hold words and mappings, not formats).
DATA_FILES: dict[str, str] = {
    # which files each revision names (A1.2): runner, auditor, comparison of runs
    "revision_kinds": "revision-kinds.json",
    # the words a note-scanning warning looks for, per language (A6.3, A9.5, A10.2)
    "note_phrases": "note-phrases.json",
}


@cache
def data(name: str) -> dict[str, Any]:
    """The parsed convention document NAME (a key of `DATA_FILES`)."""
    return _read_json(DATA_FILES[name])


@cache
def table(name: str) -> dict[str, Any]:
    """The table schema of one run-dir CSV (a key of `TABLE_FILES`)."""
    return _read_json(TABLE_FILES[name])


def table_columns(name: str) -> tuple[str, ...]:
    """That CSV's header, in order, exactly as RUN_DIR.md fixes it."""
    return tuple(field["name"] for field in table(name)["fields"])


def results_table() -> dict[str, Any]:
    """The table schema of `resultats-bruts.csv`: columns in order, types, empty allowed."""
    return table(RESULTS_TABLE)


UNBOUNDED_INTEGER = "x-unbounded-integer"
"""The keyword (true) that marks a schema place as an integer of any size: a seed is an
integer, not a 64-bit one (Python's `random` takes any; numpy's seed sequences are 128-bit)."""


@cache
def unbounded_integers(kind: str) -> frozenset[str]:
    """The JSON pointers of the places the kind's schema marks `UNBOUNDED_INTEGER`, through
    nested `properties` (not through arrays or references)."""
    found: set[str] = set()
    stack: list[tuple[dict[str, Any], str]] = [(load(kind), "")]
    while stack:
        node, pointer = stack.pop()
        if node.get(UNBOUNDED_INTEGER) is True:
            found.add(pointer)
        for name, sub in (node.get("properties") or {}).items():
            if isinstance(sub, dict):
                stack.append((sub, f"{pointer}/{name.replace('~', '~0').replace('/', '~1')}"))
    return frozenset(found)


@cache
def frame(kind: str) -> dict[str, Any]:
    """The frame schema of one reader family (a key of `FRAME_FILES`): fields in order."""
    return _read_json(FRAME_FILES[kind])


def results_columns() -> tuple[str, ...]:
    """The CSV header, in order, exactly as RUN_DIR.md fixes it."""
    return table_columns(RESULTS_TABLE)


def trials_columns() -> tuple[str, ...]:
    """The header of protocol B's `trials.csv`, exactly as RUN_DIR.md fixes it."""
    return table_columns("trials")


def policies_columns() -> tuple[str, ...]:
    """The header of protocol B's `policies.csv`, exactly as RUN_DIR.md fixes it."""
    return table_columns("policies")


def _read_json(name: str) -> dict[str, Any]:
    return json.loads(resources.files(__name__).joinpath(name).read_text(encoding="utf-8"))


CONVENTIONS_FILE = "conventions.json"


@cache
def conventions() -> dict[str, dict[str, dict[str, Any]]]:
    """`conventions.json`: the protocols' fixed numbers (group -> name -> value, ref, what)."""
    doc = _read_json(CONVENTIONS_FILE)
    return {group: names for group, names in doc.items() if not group.startswith("$")}


def convention(group: str, name: str) -> Any:
    """One convention's value (`convention("B", "min_samples_per_window")` is 10); a list
    comes back as a tuple, so no caller can change it for the others."""
    value = conventions()[group][name]["value"]
    return tuple(value) if isinstance(value, list) else value
