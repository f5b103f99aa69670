"""cpu's policies.csv row leaves its average power and joules per inference empty, latency
without energy (re-sealed): only B1001 requires a policy's pooled energy figures."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    br.edit_csv(
        root,
        "policies.csv",
        lambda rows: br.row(rows, "cpu").update(average_power_w="", joules_per_inference=""),
    )


MUTATION = mutate
