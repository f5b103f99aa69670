"""The manifest's prompt sequence SHA-256 becomes another digest than the file's (the trials'
rows keep the true one, so B1002 is quiet): only B0202 compares the declaration with the file."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_manifest

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    edit_manifest(root, lambda m: m["prompt_sequence"].update(sha256="b" * 64))


MUTATION = mutate
