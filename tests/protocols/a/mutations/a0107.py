"""The archived ONNX model `model/model.onnx` is cut short (its last 8 bytes dropped) and the
run re-sealed, so the artifacts table agrees with the file; `replay.model.sha256` still names
the export. Only A0107 compares the replay section's declared hash with the file."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu+trained"


def mutate(root: Path) -> None:
    onnx = root / "model/model.onnx"
    onnx.write_bytes(onnx.read_bytes()[:-8])
    rf.rehash(root)


MUTATION = mutate
