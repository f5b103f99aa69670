"""The archived set check (checks/set-check.json) is removed and the manifest re-hashed, so no
listed file is missing (A0005): only A0006 requires the artifact."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    (root / "checks/set-check.json").unlink()
    rf.rehash(root)


MUTATION = mutate
