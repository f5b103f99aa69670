"""The first typed summary's statistic becomes p95, over five passes: only A0604 counts the
passes a percentile needs."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_claims

TEMPLATE = "cpu+claims"


def mutate(root: Path) -> None:
    edit_claims(root, lambda c: c["summaries"][0].update(statistic="p95"))


MUTATION = mutate
