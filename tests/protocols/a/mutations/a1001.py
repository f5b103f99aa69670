"""batch-4's warm-3 is an OOM recorded with a time of 0, its incident typed (so A0605 is quiet),
in the timeline and the row: only A1001 refuses a time of 0 for a failure."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    def oom(t: list[dict]) -> None:
        e = next(
            x for x in t if (x["variant_id"], x["phase"], x["run_index"]) == ("batch-4", "warm", 3)
        )
        e.update(
            status="oom",
            elapsed_seconds=0,
            ended_at=e["started_at"],
            incident={"kind": "oom", "message": "CUDA out of memory"},
        )

    rf.edit_timeline(root, oom)
    rf.edit_rows(
        root,
        lambda rows: rf.pass_row(rows, "batch-4", "warm", 3).update(
            elapsed_seconds="0", notes="oom: out of memory, pass failed"
        ),
    )


MUTATION = mutate
