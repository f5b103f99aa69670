"""batch-1's cold-1 duration gains 1.25 s of loading, its window widened by as much so A0501 is
quiet: loading added into a pass, which only A0502 looks for."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rows = rf.read_rows(root)
    r = rf.pass_row(rows, "batch-1", "cold", 1)
    r["elapsed_seconds"] = str(round(float(r["elapsed_seconds"]) + 1.25, 6))
    rf.write_rows(root, rows)

    def widen(t: list[dict]) -> None:
        t[0]["started_at"] = rf.shift_iso(t[0]["started_at"], -1.25)

    rf.edit_timeline(root, widen)


MUTATION = mutate
