"""The same run as B0801's: energy measured on a candidate rejected at a gate, which only B0803
points out (a warning). The warning is by nature the consequence of another rule's error: it
needs the rejection, B0801, its companion."""

from __future__ import annotations

from ._helpers import build, synthetic_with

TEMPLATE = None  # the run is built from its own spec
COMPANIONS = frozenset({"B0801"})

MUTATION = build(synthetic_with(**{"torch-cuda": {"verdict": "rejected", "wrong_every": 20}}))
