"""The Windows run's battery evidence is the record of a session captured a week before the
run was declared (its `captured_at`): the same model, the same machine, the CPU chosen, but
another session. Only B0107 places a power-state file in the session's time span; the
battery check then rests on no evidence of this run (B0901, missing evidence)."""

from __future__ import annotations

from pathlib import Path

import b_fixtures as bf
import b_runs as br

TEMPLATE = "windows"
COMPANIONS = ("B0901",)


def mutate(root: Path) -> None:
    (root / "power_state/battery.winml.json").write_bytes(
        bf.winml_record(
            "gpu",
            {"mode": "policy", "policy": "MAX_EFFICIENCY"},
            [bf.CPU_EP],
            captured_at="2025-08-06T09:12:00Z",
        )
    )
    br.rehash(root)


MUTATION = mutate
