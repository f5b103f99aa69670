"""`revisions.model` (and every row's `model_revision`) becomes the SHA-256 of
`model/tokenizer.json`, a file the run keeps (re-hashed): the weights are then pinned by
nothing. Every restatement agrees, so only A0106, which hashes the file the model kind names
(`model/model.safetensors`), sees it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    lie = "sha256:" + hashlib.sha256((root / "model/tokenizer.json").read_bytes()).hexdigest()
    rf.edit_json(root, "manifest.json", lambda m: m["revisions"].update(model=lie), rehash=False)
    rf.edit_rows(root, lambda rows: [r.update(model_revision=lie) for r in rows])


MUTATION = mutate
