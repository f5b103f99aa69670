"""cpu trial 2's `average_power_w` is written with a decimal comma (re-sealed): only B0008
checks the CSV's cells."""

from __future__ import annotations

from ._helpers import set_row

TEMPLATE = "synthetic"

MUTATION = set_row("trials.csv", "cpu", 2, average_power_w="70,0")
