"""The run is built with torch-cuda's trial 3 failed, the policy honestly rejected: four ok
trials, fewer than the five only B0301 counts."""

from __future__ import annotations

from dataclasses import replace

from ._helpers import build, synthetic_with

TEMPLATE = None  # the run is built from its own spec

MUTATION = build(
    replace(
        synthetic_with(**{"torch-cuda": {"verdict": "rejected"}}),
        failed=frozenset({("torch-cuda", 3)}),
    )
)
