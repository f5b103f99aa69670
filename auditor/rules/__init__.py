"""The rule registry: one module per rule (`aNNNN_<name>.py`), each defining `RULE` with the
decorator of `base.py`. Rules are discovered from the package's modules, so adding a rule is
adding one file."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from auditor.rules.base import Rule


@cache
def _registry() -> tuple[Rule, ...]:
    found: list[Rule] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("a") or not info.name[1:5].isdigit():
            continue  # base, _derive and other helpers
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.append(module.RULE)
    return tuple(sorted(found, key=lambda r: r.code))


def all_rules() -> list[Rule]:
    """Every rule, sorted by code."""
    return list(_registry())


def get_rule(code: str) -> Rule | None:
    """The rule with this code, or None."""
    return next((r for r in _registry() if r.code == code), None)
