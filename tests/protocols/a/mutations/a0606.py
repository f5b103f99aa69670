"""batch-4's cold-1 timeline entry (the second) says it did not run in a fresh process
(re-hashed): only A0606 reads a cold pass's process."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_timeline(root, lambda t: t[1].update(fresh_process=False))


MUTATION = mutate
