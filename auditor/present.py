"""Presentation helpers every report part shares (the run report's shared sections, each
protocol's own sections, the comparison report): how a missing value reads, how a nested
value is looked up, and how a value becomes JSON-safe view-model data. It imports nothing of
the auditor, so `auditor.report` and the protocols' report parts both use it without
importing each other."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NOT_RECORDED = "not recorded"
"""What a value the run does not record reads as."""


def json_safe(value: Any) -> Any:
    """A JSON-safe copy (tuples to lists, unknown objects to str)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return str(value)


def lookup(d: Any, *keys: str, default: Any = None) -> Any:
    for k in keys:
        if not isinstance(d, Mapping) or k not in d:
            return default
        d = d[k]
    return d
