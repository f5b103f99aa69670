"""batch-4 is declared and run in float16 (its variant and its rows agree, so A0302 is quiet):
precision varies besides the announced batch, which only A0301 checks across the declared
variants."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    doc = rf.read_json(root, "manifest.json")
    doc["variants"][1]["precision"] = "float16"
    rf.write_json(root, "manifest.json", doc)
    rf.edit_rows(
        root,
        lambda rows: [r.update(precision="float16") for r in rows if r["variant_id"] == "batch-4"],
    )


MUTATION = mutate
