"""The manifest's `status` becomes `aborted`, every file left as it was: only B0007 reads the
status."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_manifest

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    edit_manifest(root, lambda m: m.update(status="aborted"))


MUTATION = mutate
