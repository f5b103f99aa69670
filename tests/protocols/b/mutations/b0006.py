"""environment.json is removed and the manifest re-sealed, so no listed file is missing (B0005):
only B0006 requires the artifact."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    (root / "environment.json").unlink()
    br.rehash(root)


MUTATION = mutate
