"""environment.json records the power mode as not available, with its reason (re-sealed): B1
metadata missing, which only B0101 requires (recorded as not available: missing evidence)."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    br.edit_json(
        root,
        "environment.json",
        lambda e: e.update(power_mode={"value": None, "not_available": "no power mode is exposed"}),
    )


MUTATION = mutate
