"""The manifest declares `truncated_texts: 0` while the archived bag-of-words tokenizer cuts
the run's first two evaluation texts (each longer than the 128-word context) (re-hashed).
Only A0307 recounts the truncated texts with the archived tokenizer."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu+trained"


def mutate(root: Path) -> None:
    rf.edit_json(
        root, "manifest.json", lambda m: m["corpus"]["truncation"].update(truncated_texts=0)
    )


MUTATION = mutate
