"""batch-4's warm-2 window (the seventh timeline entry) is shortened to 0.5 s, its
`elapsed_seconds` left as they were (re-hashed): the row's duration is longer than its window,
which only A0501 compares."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    def shorten(t: list[dict]) -> None:
        t[6]["ended_at"] = rf.shift_iso(t[6]["started_at"], 0.5)

    rf.edit_timeline(root, shorten)


MUTATION = mutate
