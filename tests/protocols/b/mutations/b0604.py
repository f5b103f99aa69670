"""ort-cuda trial 4's energy summary claims 99 J, not what its trace gives (re-sealed): only
B0604 recomputes the runner's summaries."""

from __future__ import annotations

from ._helpers import set_energy_summary

TEMPLATE = "synthetic"

MUTATION = set_energy_summary("ort-cuda", 4, energy_j=99.0)
