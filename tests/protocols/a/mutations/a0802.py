"""The CSV's third record gains one cell (re-hashed): only A0802 counts each record's cells."""

from __future__ import annotations

from pathlib import Path

from ._helpers import csv_bytes

TEMPLATE = "cpu"


def mutate(root: Path) -> None:
    def extra(b: bytes) -> bytes:
        lines = b.split(b"\r\n")
        lines[3] += b",extra"
        return b"\r\n".join(lines)

    csv_bytes(root, extra)


MUTATION = mutate
