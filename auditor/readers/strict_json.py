"""Strict, bounded JSON text parsing shared by the JSON readers: every document or line is
either read exactly or refused with the place (line, column, JSON pointer) of the fault.

What the standard library accepts silently and a run must not: the same key twice in one
object (the last one would win; also when one of them is written with `\\u` escapes, since
keys are compared decoded), the non-standard constants `NaN` and `Infinity`, a number whose
value is not finite (`1e999` becomes infinity), an integer beyond 64 bits (polars cannot hold
it, and a measure that large is not one), a `\\u` escape of a lone UTF-16 surrogate (no
UTF-8 output can hold it) and nesting deeper than `MAX_DEPTH` (the C parser raises
`RecursionError` a few hundred levels deep). A document whose schema marks a place as an
integer of any size (`schemas.unbounded_integers`: a seed) gets it there, up to
`MAX_NUMBER_CHARS` digits. The fast path is the C parser with
hooks that only flag a problem; only a flagged text is parsed again, by a small
position-tracking parser, to say where the problem is.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from auditor.readers.base import json_pointer

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects read; no artifact of a run needs a tenth of it."""
MAX_NUMBER_CHARS = 100
"""Longest number literal parsed (Python itself stops at 4300 digits with a ValueError)."""
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

_NUMBER = re.compile(r"(-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)?")
_WS = re.compile(r"[ \t\n\r]*")


@dataclass(frozen=True)
class JsonProblem:
    """Why a JSON text is refused, and where: 1-based line and column of the offending
    token in the text, and the JSON pointer of the value it belongs to."""

    message: str
    kind: str
    """`syntax`, `duplicate` (a repeated key), `number` (not finite, or beyond 64 bits),
    `limit` (nesting or a number literal too long)."""
    line: int | None = None
    column: int | None = None
    pointer: str | None = None


class _Flag(Exception):
    """Raised by a parse hook: the text has a problem; locate it on the slow path."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _Flag
    return d


def _int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Flag
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise _Flag
    return value


def _float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Flag
    value = float(text)
    if not math.isfinite(value):
        raise _Flag
    return value


def _constant(text: str) -> Any:
    raise _Flag


def _wide_int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Flag
    return int(text)


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_int=_int, parse_float=_float, parse_constant=_constant
)
_WIDE_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_int=_wide_int, parse_float=_float, parse_constant=_constant
)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(text: str, unbounded: frozenset[str] = frozenset()) -> tuple[Any, JsonProblem | None]:
    """(the value, None) when TEXT is one strict JSON value, else (None, the problem);
    UNBOUNDED the JSON pointers where an integer may be beyond 64 bits."""
    try:
        value = (_WIDE_DECODER if unbounded else _DECODER).decode(text)
    except json.JSONDecodeError as exc:
        return None, JsonProblem(f"not valid JSON: {exc.msg}", "syntax", exc.lineno, exc.colno)
    except (_Flag, RecursionError, ValueError):
        return None, locate(text, unbounded)
    if _deeper_than(value, MAX_DEPTH) or (unbounded and _wide_elsewhere(value, unbounded)):
        return None, locate(text, unbounded)
    # A `\udcff` escape that is not half of a pair decodes to a lone surrogate: a string no
    # UTF-8 output (a report, a JSON result) can hold. Only texts with such escapes pay.
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        return None, locate(text)
    return value, None


def _wide_elsewhere(value: Any, unbounded: frozenset[str]) -> bool:
    """Whether VALUE holds an integer beyond 64 bits at a pointer not in UNBOUNDED."""
    stack: list[tuple[Any, list[Any]]] = [(value, [])]
    while stack:
        v, path = stack.pop()
        if isinstance(v, dict):
            stack.extend((c, [*path, k]) for k, c in v.items())
        elif isinstance(v, list):
            stack.extend((c, [*path, i]) for i, c in enumerate(v))
        elif (
            isinstance(v, int)
            and not isinstance(v, bool)
            and not INT64_MIN <= v <= INT64_MAX
            and json_pointer(path) not in unbounded
        ):
            return True
    return False


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _LONE_SURROGATE.search(v):
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether VALUE nests arrays and objects more than LIMIT levels (iterative)."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(v, dict):
            children = v.values()
        elif isinstance(v, list):
            children = v
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


class _Found(Exception):
    def __init__(self, message: str, kind: str, pos: int, path: list[Any]) -> None:
        super().__init__(message)
        self.message, self.kind, self.pos, self.path = message, kind, pos, path


def locate(text: str, unbounded: frozenset[str] = frozenset()) -> JsonProblem:
    """The first problem of TEXT, with its place (the slow path: pure Python); UNBOUNDED as
    for `loads`."""
    try:
        end = _value(text, _ws(text, 0), [], 0, unbounded)
        if _ws(text, end) != len(text):
            raise _Found("not valid JSON: extra data", "syntax", _ws(text, end), [])
    except _Found as f:
        line = text.count("\n", 0, f.pos) + 1
        column = f.pos - (text.rfind("\n", 0, f.pos) + 1) + 1
        return JsonProblem(f.message, f.kind, line, column, json_pointer(f.path))
    return JsonProblem("not valid JSON", "syntax")  # the fast path refused what this reads


def _ws(text: str, i: int) -> int:
    m = _WS.match(text, i)
    return m.end() if m else i


def _value(
    text: str, i: int, path: list[Any], depth: int, unbounded: frozenset[str] = frozenset()
) -> int:
    """Parse the value at I (whitespace skipped); return the index after it."""
    c = text[i : i + 1]
    if c in ("{", "["):
        if depth >= MAX_DEPTH:
            raise _Found(
                f"nested deeper than {MAX_DEPTH} levels (the auditor's limit)", "limit", i, path
            )
        return (_object if c == "{" else _array)(text, i + 1, path, depth + 1, unbounded)
    if c == '"':
        return _string(text, i)[1]
    m = _NUMBER.match(text, i)
    if m:
        literal = m.group()
        if len(literal) > MAX_NUMBER_CHARS:
            raise _Found(
                f"a number of {len(literal)} characters (the auditor reads at most "
                f"{MAX_NUMBER_CHARS})",
                "limit",
                i,
                path,
            )
        if m.group(2) or m.group(3):
            if not math.isfinite(float(literal)):
                raise _Found(f"{literal} is not a finite number", "number", i, path)
        elif not INT64_MIN <= int(literal) <= INT64_MAX and json_pointer(path) not in unbounded:
            raise _Found(f"the integer {literal} is beyond 64 bits", "number", i, path)
        return m.end()
    for word in ("true", "false", "null"):
        if text.startswith(word, i):
            return i + len(word)
    for word in ("NaN", "Infinity", "-Infinity"):
        if text.startswith(word, i):
            raise _Found(f"{word} is not a JSON number", "number", i, path)
    raise _Found("not valid JSON: expecting a value", "syntax", i, path)


def _string(text: str, i: int) -> tuple[str, int]:
    try:
        value, end = json.decoder.scanstring(text, i + 1, True)  # type: ignore[attr-defined]
    except json.JSONDecodeError as exc:
        raise _Found(f"not valid JSON: {exc.msg}", "syntax", exc.pos, []) from None
    if _LONE_SURROGATE.search(value):
        raise _Found(
            "a \\u escape of half a UTF-16 surrogate pair: not a Unicode string", "syntax", i, []
        )
    return value, end


def _object(
    text: str, i: int, path: list[Any], depth: int, unbounded: frozenset[str] = frozenset()
) -> int:
    seen: set[str] = set()
    i = _ws(text, i)
    if text.startswith("}", i):
        return i + 1
    while True:
        if not text.startswith('"', i):
            raise _Found("not valid JSON: expecting a key", "syntax", i, path)
        key, j = _string(text, i)
        if key in seen:
            raise _Found(
                f"the key {key!r} appears twice in one object", "duplicate", i, [*path, key]
            )
        seen.add(key)
        j = _ws(text, j)
        if not text.startswith(":", j):
            raise _Found("not valid JSON: expecting ':'", "syntax", j, path)
        i = _ws(text, _value(text, _ws(text, j + 1), [*path, key], depth, unbounded))
        if text.startswith("}", i):
            return i + 1
        if not text.startswith(",", i):
            raise _Found("not valid JSON: expecting ',' or '}'", "syntax", i, path)
        i = _ws(text, i + 1)


def _array(
    text: str, i: int, path: list[Any], depth: int, unbounded: frozenset[str] = frozenset()
) -> int:
    i = _ws(text, i)
    if text.startswith("]", i):
        return i + 1
    n = 0
    while True:
        i = _ws(text, _value(text, _ws(text, i), [*path, n], depth, unbounded))
        if text.startswith("]", i):
            return i + 1
        if not text.startswith(",", i):
            raise _Found("not valid JSON: expecting ',' or ']'", "syntax", i, path)
        i += 1
        n += 1
