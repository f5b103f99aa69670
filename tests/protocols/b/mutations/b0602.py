"""One powermetrics sample is missing in the middle of the macOS run's cpu trial 1 window
(re-sealed): a sampling gap, which only B0602 measures."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "macos"


def mutate(root: Path) -> None:
    path = root / "power/cpu/trial-1.txt"
    blocks = path.read_text(encoding="utf-8").split("*** Sampled")
    del blocks[8]
    path.write_text("*** Sampled".join(blocks), encoding="utf-8")
    br.rehash(root)


MUTATION = mutate
