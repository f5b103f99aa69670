"""The manifest's truncation declares a context of 256 tokens, not the variants': only A0304
compares the truncation's context with the variants'."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_json(
        root,
        "manifest.json",
        lambda m: rf.set_at(m, "corpus/truncation/context_tokens", 256),
        rehash=False,
    )


MUTATION = mutate
