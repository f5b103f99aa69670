"""The protocols the auditor knows, by the value of `manifest.json`'s `protocol`.

Each is a package with a `PROTOCOL` (`auditor.protocols.base.Protocol`); it is imported only
when a run of it is audited (or when every rule is listed)."""

from __future__ import annotations

import importlib
from functools import cache

from auditor.protocols.base import Protocol
from auditor.protocols.names import PROTOCOL_A, PROTOCOL_B, citing
from auditor.rule import Rule

PACKAGES: dict[str, str] = {
    PROTOCOL_A: "auditor.protocols.a",
    PROTOCOL_B: "auditor.protocols.b",
}


@cache
def get(name: str) -> Protocol | None:
    """The protocol a manifest names, or None when the auditor does not know it."""
    package = PACKAGES.get(name)
    return None if package is None else importlib.import_module(package).PROTOCOL


def all_protocols() -> list[Protocol]:
    return [p for p in (get(n) for n in PACKAGES) if p is not None]


def by_signature(present: set[str]) -> Protocol | None:
    """The protocol whose signature files are present, when exactly one matches (a run
    whose manifest is missing or unreadable)."""
    hits = [p for p in all_protocols() if any(f in present for f in p.signature_files)]
    return hits[0] if len(hits) == 1 else None


def all_rules() -> list[Rule]:
    """Every rule of every protocol, sorted by code."""
    return sorted((r for p in all_protocols() for r in p.rules), key=lambda r: r.code)


def get_rule(code: str) -> Rule | None:
    return next((r for r in all_rules() if r.code == code), None)


def rules_for_ref(ref: str) -> list[Rule]:
    """The rules that enforce protocol section REF (`A2.1`), by their own ref or their doc."""
    pattern = citing(ref)  # `A2.1` but not `A2.10`, `XA2.1` or `RUN_DIR.md`
    return [r for r in all_rules() if r.protocol_ref == ref or pattern.search(r.doc)]
