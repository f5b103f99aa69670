"""The macOS run's accepted reference becomes the Core ML package, not an ONNX artifact: only
B0502 checks the Core ML evaluation's reference."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_manifest

TEMPLATE = "macos"


def mutate(root: Path) -> None:
    edit_manifest(root, lambda m: m["reference"].update(artifact_file="model/candidate.mlpackage"))


MUTATION = mutate
