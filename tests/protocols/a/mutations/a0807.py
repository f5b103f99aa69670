"""The CSV's line ends become LF (re-hashed): only A0807 points out record ends that are not
CRLF (a warning)."""

from __future__ import annotations

from pathlib import Path

from ._helpers import csv_bytes

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    csv_bytes(root, lambda b: b.replace(b"\r\n", b"\n"))


MUTATION = mutate
