"""cpu trial 1's first two answers are swapped (re-sealed): the answers leave the prompt
sequence's order, which only B1002 checks."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    br.edit_jsonl(root, "outputs/cpu/trial-1.jsonl", lambda lines: [lines[1], lines[0], *lines[2:]])


MUTATION = mutate
