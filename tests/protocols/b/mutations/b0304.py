"""torch-cuda trial 2 claims 79.2 J, not the energy its trace measures over the window
(re-sealed): only B0304 recomputes the energy."""

from __future__ import annotations

from ._helpers import set_row

TEMPLATE = "synthetic"

MUTATION = set_row("trials.csv", "torch-cuda", 2, energy_j="79.2")
