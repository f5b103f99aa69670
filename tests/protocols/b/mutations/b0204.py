"""The manifest states `timer_includes_tokenization: false` and a timer scope of "model
forward only": each latency leaves tokenization out, which only B0204 judges."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_manifest

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    edit_manifest(
        root,
        lambda m: m.update(timer_scope="model forward only", timer_includes_tokenization=False),
    )


MUTATION = mutate
