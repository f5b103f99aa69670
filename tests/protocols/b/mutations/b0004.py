"""A notes.txt written after the run, in no entry of the manifest's hash table: only B0004 walks
the run dir for unlisted files."""

from __future__ import annotations

from pathlib import Path

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    (root / "notes.txt").write_text("added later\n")


MUTATION = mutate
