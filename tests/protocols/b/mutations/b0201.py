"""ort-cuda trial 3 records 10 warm-up iterations, fewer than the protocol's 100 (re-sealed):
only B0201 reads the warm-up."""

from __future__ import annotations

from ._helpers import set_row

TEMPLATE = "synthetic"

MUTATION = set_row("trials.csv", "ort-cuda", 3, warmup_iterations="10")
