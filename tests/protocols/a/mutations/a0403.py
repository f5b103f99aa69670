"""Nothing changed: the `b200` template bills a lot of two GPUs and uses one, which only A0403
points out (a warning)."""

from __future__ import annotations

from pathlib import Path

TEMPLATE = "b200"


def mutate(root: Path) -> None:
    pass  # the b200 template: a lot of two GPUs, one used


MUTATION = mutate
