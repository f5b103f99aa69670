"""The manifest's `status` becomes `aborted`, every file left as it was: only A0007 reads the
status."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_json(root, "manifest.json", lambda m: rf.set_at(m, "status", "aborted"), rehash=False)


MUTATION = mutate
