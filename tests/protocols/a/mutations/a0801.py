"""The CSV header names `elapsed_s` for `elapsed_seconds` (re-hashed): only A0801 checks the
header."""

from __future__ import annotations

from pathlib import Path

from ._helpers import csv_bytes

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    csv_bytes(root, lambda b: b.replace(b"elapsed_seconds", b"elapsed_s", 1))


MUTATION = mutate
