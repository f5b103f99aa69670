"""torch-cuda's policies.csv verdict becomes `baseline`, a second baseline (re-sealed): only
B1003 checks the verdict claims."""

from __future__ import annotations

from ._helpers import set_row

TEMPLATE = "synthetic"

MUTATION = set_row("policies.csv", "torch-cuda", None, verdict="baseline")
