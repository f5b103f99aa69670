"""The manifest's `artifact_sha256` becomes another digest than the artifact file's: only B0103
hashes the artifact against it. gates/gates.json still records the real file's digest for the
torch policies' gate passes, so B0804 says their gates judged another artifact than the one
declared: the consequence of the same false record."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_manifest

TEMPLATE = "synthetic"
COMPANIONS = ("B0804",)


def mutate(root: Path) -> None:
    edit_manifest(root, lambda m: m.update(artifact_sha256="a" * 64))


MUTATION = mutate
