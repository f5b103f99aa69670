"""The manifest's `artifact_sha256` becomes another digest than the artifact file's: only B0103
hashes the artifact against it."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_manifest

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    edit_manifest(root, lambda m: m.update(artifact_sha256="a" * 64))


MUTATION = mutate
