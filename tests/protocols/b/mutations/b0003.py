"""A newline appended to environment.json, not re-sealed: the document reads the same, only its
bytes differ from the manifest's SHA-256, which B0003 compares."""

from __future__ import annotations

from pathlib import Path

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    with open(root / "environment.json", "a", encoding="utf-8") as fh:
        fh.write("\n")


MUTATION = mutate
