"""The Windows run's battery evidence (power_state/battery.winml.json, the MAX_EFFICIENCY
session chosen unplugged) is the record of another model's session: its `model_sha256` is
not the run's artifact. Only B0106 compares a power-state record's model with the run's;
the battery check then rests on no evidence of this run (B0901, missing evidence)."""

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
            model_sha256="0b5e" + "7" * 60,
        )
    )
    br.rehash(root)


MUTATION = mutate
