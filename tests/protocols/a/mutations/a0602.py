"""batch-1's warm-2 timeline entry (the eighth) is moved 5 s earlier (re-hashed): the entries'
times no longer follow the declared pass order, which only A0602 checks."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_timeline(
        root,
        lambda t: t[7].update(
            started_at=rf.shift_iso(t[7]["started_at"], -5),
            ended_at=rf.shift_iso(t[7]["ended_at"], -5),
        ),
    )


MUTATION = mutate
