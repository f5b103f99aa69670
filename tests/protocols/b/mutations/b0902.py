"""Every trial of the Windows run records `battery` as its power source, while the Windows ML
policy was assigned a GPU (re-sealed): only B0902 checks the discrete GPU is skipped on battery."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "windows"


def mutate(root: Path) -> None:
    br.edit_csv(root, "trials.csv", lambda rows: [r.update(power_source="battery") for r in rows])


MUTATION = mutate
