"""The Mac run's ane trial 2 power trace is a powermetrics log of another Mac: its header
names `Machine model: Mac16,6` where environment.json (and every other trace) says Mac15,6;
its readings, times and the figures claimed from them stay as they were. Only B0105 compares
the machine a trace names with the run's."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "macos"


def mutate(root: Path) -> None:
    path = root / "power/ane/trial-2.txt"
    path.write_bytes(
        path.read_bytes().replace(b"Machine model: Mac15,6", b"Machine model: Mac16,6", 1)
    )
    br.rehash(root)


MUTATION = mutate
