"""`--format`s of `audit archive` and `audit compare`: one module per format, each with
`archive(outcome) -> str` and/or `comparison(comparison) -> str`. They only format the
`ArchiveOutcome` and the `Comparison`; adding a format is one module and one line here."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

FORMATS: dict[str, tuple[str, str]] = {
    "text": ("auditor.archive.output.text", "a summary for a terminal"),
    "json": ("auditor.archive.output.json", "one JSON object (schemas/comparison.schema.json "
             "for audit compare)"),
    "csv": ("auditor.archive.output.csv", "the comparison table as RFC 4180 CSV"),
}


def formats(kind: str) -> list[str]:
    """The formats that can render KIND (`archive` or `comparison`)."""
    return [name for name, (module, _) in FORMATS.items()
            if hasattr(importlib.import_module(module), kind)]


def renderer(name: str, kind: str) -> Callable[[Any], str]:
    return getattr(importlib.import_module(FORMATS[name][0]), kind)
