"""The Windows run's manifest records no power-state checks: only B0901 requires them."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_manifest

TEMPLATE = "windows"


def mutate(root: Path) -> None:
    edit_manifest(root, lambda m: m.pop("power_state_checks"))


MUTATION = mutate
