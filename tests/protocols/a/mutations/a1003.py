"""The typed ranking lists the accepted variants slowest first, each with its true figure: only
A1003 recomputes the ranking's order from the passes."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_claims

TEMPLATE = "cpu+claims"


def mutate(root: Path) -> None:
    edit_claims(
        root,
        lambda c: c["rankings"][0].update(
            variants=c["rankings"][0]["variants"][::-1], values=c["rankings"][0]["values"][::-1]
        ),
    )


MUTATION = mutate
