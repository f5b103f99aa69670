"""The manifest declares one torch thread and every timeline entry records one, but batch-4's
cold pass ran with four (re-hashed): only A0406 holds the threads a pass ran with to the
declared ones."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def _threads(entries: list[dict]) -> None:
    for e in entries:
        e["torch_threads"] = 4 if (e["variant_id"], e["phase"]) == ("batch-4", "cold") else 1


def mutate(root: Path) -> None:
    rf.edit_json(
        root, "manifest.json", lambda m: m.update(threads={"torch_intra_op": 1}), rehash=False
    )
    rf.edit_timeline(root, _threads)


MUTATION = mutate
