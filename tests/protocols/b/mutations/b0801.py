"""The run is built with torch-cuda answering wrong every 20th prompt, below the accuracy floor,
the policy honestly rejected: only B0801 recomputes the gates."""

from __future__ import annotations

from ._helpers import build, synthetic_with

TEMPLATE = None  # the run is built from its own spec

MUTATION = build(synthetic_with(**{"torch-cuda": {"verdict": "rejected", "wrong_every": 20}}))
