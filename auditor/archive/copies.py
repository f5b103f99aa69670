"""Which index rows are runs (`audit compare`): rows that share a manifest and all their bytes
(`content_sha256`) are copies of one run, which counts once; rows that share a manifest but
not their bytes are a conflict (a copy was edited): the version whose files match its
manifest (`matches_manifest`) is the run, the others are set aside, and when no version (or
more than one) matches, none is counted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ConflictMember:
    source: str
    matches_manifest: bool | None
    verdict: str
    content_sha256: str | None


@dataclass(frozen=True)
class Conflict:
    """Index rows that share a manifest but not their bytes."""

    manifest_sha256: str
    members: tuple[ConflictMember, ...]
    genuine: str | None
    """The source counted as the run: the one whose files match its manifest; None when no
    version (or more than one) does, and then none of them is counted."""


@dataclass
class Identity:
    counted: list[dict[str, Any]]
    copies: list[tuple[str, str]]
    conflicts: list[Conflict]
    set_aside: int = 0
    set_aside_sources: tuple[tuple[str, str], ...] = ()
    """(source, verdict) of each row set aside."""


def identify(rows: list[dict[str, Any]]) -> Identity:
    """Copies and conflicts among audited ROWS (sorted by source): the rows counted as runs,
    in source order."""
    out = Identity([], [], [], 0)
    aside: list[tuple[str, str]] = []
    by_manifest: dict[str, list[dict[str, Any]]] = {}
    alone: list[dict[str, Any]] = []
    for r in rows:
        (
            by_manifest.setdefault(r["manifest_sha256"], []) if r["manifest_sha256"] else alone
        ).append(r)
    counted = list(alone)
    for sha, group in by_manifest.items():
        versions: dict[str, list[dict[str, Any]]] = {}
        for r in group:  # a row whose bytes are unknown is a version of its own
            versions.setdefault(r["content_sha256"] or f"?{r['source']}", []).append(r)
        run: dict[str, Any] | None
        if len(versions) == 1:
            run = group[0]
        else:
            matching = [
                v for v in versions.values() if all(r["matches_manifest"] is True for r in v)
            ]
            run = matching[0][0] if len(matching) == 1 else None
            out.conflicts.append(
                Conflict(
                    manifest_sha256=sha,
                    genuine=run["source"] if run else None,
                    members=tuple(
                        ConflictMember(
                            r["source"], r["matches_manifest"], r["verdict"], r["content_sha256"]
                        )
                        for r in group
                    ),
                )
            )
        if run is None:
            aside += [(r["source"], r["verdict"]) for r in group]
            continue
        counted.append(run)
        copies = [
            (r["source"], run["source"])
            for r in group
            if r is not run
            and r["content_sha256"] is not None
            and r["content_sha256"] == run["content_sha256"]
        ]
        out.copies += copies
        copied = {s for s, _ in copies}
        aside += [
            (r["source"], r["verdict"]) for r in group if r is not run and r["source"] not in copied
        ]
    out.counted = sorted(counted, key=lambda r: r["source"])
    out.set_aside = len(aside)
    out.set_aside_sources = tuple(sorted(aside))
    return out
