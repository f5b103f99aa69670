"""torch-cuda's policies.csv row says its compute units are `mps`, not the declared policy's
(re-sealed): only B0102 compares the rows with the declared policies."""

from __future__ import annotations

from ._helpers import set_row

TEMPLATE = "synthetic"

MUTATION = set_row("policies.csv", "torch-cuda", None, compute_units="mps")
