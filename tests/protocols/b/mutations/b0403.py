"""ort-cuda's policies.csv claims an operation share of 0.95, not the share its placement frame
gives (re-sealed): only B0403 recomputes the shares."""

from __future__ import annotations

from ._helpers import set_row

TEMPLATE = "synthetic"

MUTATION = set_row("policies.csv", "ort-cuda", None, operation_share="0.95")
