"""A quick "certainly valid" check of a document against one of this package's schemas,
compiled once into plain Python closures, so the common case (a valid document) costs
neither importing jsonschema nor its per-keyword machinery.

It is only ever a shortcut: `schemas.validator(kind)` answers from it when it says valid and
asks jsonschema otherwise, so every error message, pointer and order still comes from
jsonschema. It must therefore never call valid what jsonschema refuses: it implements the
keywords these schemas use, with jsonschema's semantics (`integer` taken literally as this
package does, `format: date-time` with the same RFC 3339 check, `bool` never equal to a
number), and gives up (`Unsure`, or no compiled check at all) on anything else: a keyword it
does not know, a `format` other than `date-time`, a Python value no JSON parser returns, an
`enum` of containers. `tests/test_schemas.py` compares both on many valid and broken
documents."""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urldefrag, urljoin

Check = Callable[[Any], bool]


class Unsure(Exception):
    """The quick check cannot decide this document: ask jsonschema."""


class Unsupported(Exception):
    """The schema uses something the quick check does not implement."""


ANNOTATIONS = frozenset({
    "$schema", "$id", "$defs", "$comment", "title", "description", "default", "examples",
    "deprecated", "readOnly", "writeOnly"})
"""Keywords that never make a document invalid."""

_RFC3339 = re.compile(r"""
    ^(\d{4})-(0[1-9]|1[0-2])-(\d{2})
    T(?:[01]\d|2[0123]):(?:[0-5]\d):(?:[0-5]\d)(?:\.\d+)?
    (?:Z|[+-](?:[01]\d|2[0123]):[0-5]\d)$""", re.VERBOSE | re.ASCII)
"""`rfc3339_validator.RFC3339_REGEX`, the check jsonschema gives `format: date-time` (that
package, and `six` with it, cost `audit check` several milliseconds to import; the tests
compare both on many strings)."""


def validate_rfc3339(text: str) -> bool:
    """`rfc3339_validator.validate_rfc3339`: the syntax, a year other than 0, a real day."""
    m = _RFC3339.match(text)
    if m is None:
        return False
    year, month, day = map(int, m.groups())
    return bool(year) and 1 <= day <= calendar.monthrange(year, month)[1]


def _date_time(value: Any) -> bool:
    """jsonschema's `date-time` check (`jsonschema._format.is_datetime`)."""
    return not isinstance(value, str) or validate_rfc3339(value.upper())


_SCALARS = (str, int, float, bool, type(None))
_JSON_TYPES = frozenset({dict, list, str, int, float, bool, type(None)})


def _is(value: Any, t: type) -> bool:
    """Whether VALUE is of the JSON type T (dict, list, str); `Unsure` for a Python value no
    JSON parser returns (a dict subclass, a tuple...), where jsonschema may see it otherwise."""
    vt = type(value)
    if vt is t:
        return True
    if vt in _JSON_TYPES:
        return False
    raise Unsure


def _kind(value: Any) -> str:
    """The JSON type of a value a JSON parser returns; `Unsure` for anything else."""
    t = type(value)
    if t is dict:
        return "object"
    if t is list:
        return "array"
    if t is str:
        return "string"
    if t is bool:
        return "boolean"
    if t is int:
        return "integer"
    if t is float:
        return "number"
    if value is None:
        return "null"
    raise Unsure


def _is_type(value: Any, name: str) -> bool:
    k = _kind(value)
    if name == "number":
        return k in ("integer", "number")
    if name in ("object", "array", "string", "boolean", "integer", "null"):
        return k == name
    raise Unsure


def _scalar_key(value: Any) -> tuple[str, Any]:
    """A key under which two scalars are equal exactly when jsonschema's `equal` says so
    (`1 == 1.0`, `True != 1`)."""
    k = _kind(value)
    if k in ("object", "array"):
        raise Unsure
    if k in ("integer", "number"):
        return ("number", value)
    return (k, value)


class Compiler:
    """Compiles schemas into checks; RESOLVE gives the schema document of an `$id` (None
    when there is none: a `$ref` to it is unsupported)."""

    def __init__(self, resolve: Callable[[str], dict[str, Any] | None]) -> None:
        self.resolve = resolve
        self._done: dict[tuple[str, str], Check] = {}

    def document_check(self, uri: str) -> Check:
        return self._ref(uri, "")

    def _ref(self, base: str, ref: str) -> Check:
        target, fragment = urldefrag(urljoin(base, ref))
        document = self.resolve(target)
        if document is None or (fragment and not fragment.startswith("/")):
            raise Unsupported(ref)
        key = (target, fragment)
        if key not in self._done:
            cell: list[Check] = []
            self._done[key] = lambda v: cell[0](v)  # a cycle of refs resolves through this
            node: Any = document
            for part in fragment.split("/")[1:]:
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(node, dict) or part not in node:
                    raise Unsupported(ref)
                node = node[part]
            cell.append(self.compile(node, target))
            self._done[key] = cell[0]
        return self._done[key]

    def compile(self, schema: Any, base: str) -> Check:
        if schema is True:
            return lambda v: True
        if schema is False:
            return lambda v: False
        if not isinstance(schema, dict):
            raise Unsupported(repr(schema))
        if "$id" in schema and urljoin(base, schema["$id"]) != base:
            raise Unsupported("$id")  # a nested resource: not used by these schemas
        checks: list[Check] = []
        for key, arg in schema.items():
            if key in ANNOTATIONS or key in ("then", "else"):
                continue
            make = getattr(self, "_k_" + key.lstrip("$"), None)
            if make is None:
                raise Unsupported(key)
            checks.append(make(arg, schema, base))
        if len(checks) == 1:
            return checks[0]
        checks_t = tuple(checks)
        return lambda v: all(c(v) for c in checks_t)

    # one method per keyword: (its value, the schema it is in, the base URI) -> check
    def _k_ref(self, arg: Any, schema: dict, base: str) -> Check:
        if not isinstance(arg, str):
            raise Unsupported("$ref")
        return self._ref(base, arg)

    def _k_type(self, arg: Any, schema: dict, base: str) -> Check:
        names = (arg,) if isinstance(arg, str) else tuple(arg)
        for n in names:
            if n not in ("object", "array", "string", "boolean", "integer", "null", "number"):
                raise Unsupported(f"type {n}")
        return lambda v: any(_is_type(v, n) for n in names)

    def _k_properties(self, arg: Any, schema: dict, base: str) -> Check:
        props = {name: self.compile(sub, base) for name, sub in arg.items()}

        def check(v: Any) -> bool:
            if not _is(v, dict):
                return True
            return all(sub(v[name]) for name, sub in props.items() if name in v)
        return check

    def _k_additionalProperties(self, arg: Any, schema: dict, base: str) -> Check:
        if "patternProperties" in schema:
            raise Unsupported("patternProperties")
        known = frozenset(schema.get("properties", {}))
        sub = self.compile(arg, base)
        if arg is False:
            return lambda v: not _is(v, dict) or known.issuperset(v)
        return lambda v: not _is(v, dict) or all(sub(x) for k, x in v.items()
                                                    if k not in known)

    def _k_required(self, arg: Any, schema: dict, base: str) -> Check:
        names = tuple(arg)
        return lambda v: not _is(v, dict) or all(n in v for n in names)

    def _k_propertyNames(self, arg: Any, schema: dict, base: str) -> Check:
        sub = self.compile(arg, base)
        return lambda v: not _is(v, dict) or all(sub(k) for k in v)

    def _k_minProperties(self, arg: Any, schema: dict, base: str) -> Check:
        return lambda v: not _is(v, dict) or len(v) >= arg

    def _k_maxProperties(self, arg: Any, schema: dict, base: str) -> Check:
        return lambda v: not _is(v, dict) or len(v) <= arg

    def _k_enum(self, arg: Any, schema: dict, base: str) -> Check:
        if not all(isinstance(x, _SCALARS) for x in arg):
            raise Unsupported("enum of containers")
        keys = frozenset(_scalar_key(x) for x in arg)
        return lambda v: _scalar_key(v) in keys

    def _k_const(self, arg: Any, schema: dict, base: str) -> Check:
        if not isinstance(arg, _SCALARS):
            raise Unsupported("const container")
        key = _scalar_key(arg)
        return lambda v: _scalar_key(v) == key

    def _k_minLength(self, arg: Any, schema: dict, base: str) -> Check:
        return lambda v: not _is(v, str) or len(v) >= arg

    def _k_maxLength(self, arg: Any, schema: dict, base: str) -> Check:
        return lambda v: not _is(v, str) or len(v) <= arg

    def _k_pattern(self, arg: Any, schema: dict, base: str) -> Check:
        search = re.compile(arg).search
        return lambda v: not _is(v, str) or search(v) is not None

    def _k_format(self, arg: Any, schema: dict, base: str) -> Check:
        if arg != "date-time":
            raise Unsupported(f"format {arg}")
        return _date_time

    def _number(self, test: Callable[[Any], bool]) -> Check:
        return lambda v: not _is_type(v, "number") or test(v)

    def _k_minimum(self, arg: Any, schema: dict, base: str) -> Check:
        return self._number(lambda v: v >= arg)

    def _k_maximum(self, arg: Any, schema: dict, base: str) -> Check:
        return self._number(lambda v: v <= arg)

    def _k_exclusiveMinimum(self, arg: Any, schema: dict, base: str) -> Check:
        return self._number(lambda v: v > arg)

    def _k_exclusiveMaximum(self, arg: Any, schema: dict, base: str) -> Check:
        return self._number(lambda v: v < arg)

    def _k_items(self, arg: Any, schema: dict, base: str) -> Check:
        sub = self.compile(arg, base)
        skip = len(schema.get("prefixItems", ()))
        return lambda v: not _is(v, list) or all(sub(x) for x in v[skip:])

    def _k_prefixItems(self, arg: Any, schema: dict, base: str) -> Check:
        subs = tuple(self.compile(s, base) for s in arg)
        return lambda v: not _is(v, list) or all(s(x) for s, x in zip(subs, v, strict=False))

    def _k_minItems(self, arg: Any, schema: dict, base: str) -> Check:
        return lambda v: not _is(v, list) or len(v) >= arg

    def _k_maxItems(self, arg: Any, schema: dict, base: str) -> Check:
        return lambda v: not _is(v, list) or len(v) <= arg

    def _k_uniqueItems(self, arg: Any, schema: dict, base: str) -> Check:
        if not arg:
            return lambda v: True

        def check(v: Any) -> bool:
            if not _is(v, list):
                return True
            keys = [_scalar_key(x) for x in v]  # containers: Unsure
            return len(set(keys)) == len(keys)
        return check

    def _k_contains(self, arg: Any, schema: dict, base: str) -> Check:
        if "minContains" in schema or "maxContains" in schema:
            raise Unsupported("minContains")
        sub = self.compile(arg, base)
        return lambda v: not _is(v, list) or any(sub(x) for x in v)

    def _k_allOf(self, arg: Any, schema: dict, base: str) -> Check:
        subs = tuple(self.compile(s, base) for s in arg)
        return lambda v: all(s(v) for s in subs)

    def _k_anyOf(self, arg: Any, schema: dict, base: str) -> Check:
        subs = tuple(self.compile(s, base) for s in arg)
        return lambda v: any(s(v) for s in subs)

    def _k_oneOf(self, arg: Any, schema: dict, base: str) -> Check:
        subs = tuple(self.compile(s, base) for s in arg)
        return lambda v: sum(1 for s in subs if s(v)) == 1

    def _k_not(self, arg: Any, schema: dict, base: str) -> Check:
        sub = self.compile(arg, base)
        return lambda v: not sub(v)

    def _k_if(self, arg: Any, schema: dict, base: str) -> Check:
        cond = self.compile(arg, base)
        then = self.compile(schema.get("then", True), base)
        other = self.compile(schema.get("else", True), base)
        return lambda v: then(v) if cond(v) else other(v)


def compile_check(resolve: Callable[[str], dict[str, Any] | None], uri: str) -> Check | None:
    """The quick check of the schema whose `$id` is URI (RESOLVE gives the document of an
    `$id`), or None when it uses something this module does not implement (jsonschema then
    decides every document)."""
    try:
        return Compiler(resolve).document_check(uri)
    except (Unsupported, re.error, TypeError, AttributeError):
        return None


def certainly_valid(check: Check | None, value: Any) -> bool:
    """True only when CHECK is sure VALUE is valid."""
    if check is None:
        return False
    try:
        return check(value)
    except (Unsure, RecursionError, TypeError):
        return False
