"""batch-4's warm-3 ran in another process than its warm-up, as its timeline entry and its
placement evidence both say (so A0105 is quiet): only A0608 holds a warm pass's process against
its warm-up's."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    rf.edit_timeline(
        root,
        lambda t: next(
            x for x in t if (x["variant_id"], x["phase"], x["run_index"]) == ("batch-4", "warm", 3)
        ).update(pid=5123),
    )
    rf.edit_json(
        root, "evidence/placement/batch-4/warm-3.json", lambda d: rf.set_at(d, "pid", 5123)
    )


MUTATION = mutate
