"""Output formats, one family per thing a command prints, one module per format:

| family | package | renders |
| --- | --- | --- |
| `CHECK` | `auditor.output.check` | `audit check`'s `AuditResult` |
| `EVIDENCE` | `auditor.output.evidence` | `audit evidence`'s `EvidenceSummary` |
| `ARCHIVE` | `auditor.output.archive` | `audit archive`'s `ArchiveOutcome` |
| `COMPARISON` | `auditor.output.comparison` | `audit compare`'s `Comparison` |
| `REPLAY` | `auditor.output.replay` | `audit replay`'s `ReplayResult` |

Each module declares `FORMAT = Format(name, description, render)`, its name being the
module's; `render(value, *, color=False) -> str` only formats what it is given. Adding a
format is adding one module: the registry finds it, `--format` offers it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from auditor.registry import Registry


@dataclass(frozen=True)
class Format:
    """One output format of one family."""

    name: str
    """What `--format` takes (the module's name)."""
    description: str
    """One line for `--help`."""
    render: Callable[..., str]
    """`render(value, *, color=False) -> str`: the text to print."""


def _family(name: str, package: str) -> Registry[Format]:
    return Registry(
        family=f"{name} output format",
        package=f"auditor.output.{package}",
        attribute="FORMAT",
        kind=Format,
        first=("text",),
    )


CHECK = _family("audit check", "check")
EVIDENCE = _family("audit evidence", "evidence")
ARCHIVE = _family("audit archive", "archive")
COMPARISON = _family("audit compare", "comparison")
REPLAY = _family("audit replay", "replay")


def render(family: Registry[Format], name: str, value: Any, *, color: bool = False) -> str:
    """VALUE in format NAME of FAMILY."""
    return family[name].render(value, color=color)
