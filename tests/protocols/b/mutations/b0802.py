"""torch-cuda's policies.csv claims an accuracy of 0.95, not the one its answers give
(re-sealed): only B0802 recomputes the gate claims."""

from __future__ import annotations

from ._helpers import set_row

TEMPLATE = "synthetic"

MUTATION = set_row("policies.csv", "torch-cuda", None, accuracy="0.95")
