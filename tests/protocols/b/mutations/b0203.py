"""Line 8 of cpu trial 2's answers gets the label `spam`, no declared class (re-sealed): only
B0203 validates each answer line."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    def bad(lines: list[dict]) -> None:
        lines[7]["label"] = "spam"

    br.edit_jsonl(root, "outputs/cpu/trial-2.jsonl", bad)


MUTATION = mutate
