"""Shared helpers of the reader tests: the real fixture files (copied into fixtures/ so the
tests never skip; the same bytes as ../shared/fixtures/external) and the checks every Read
must pass whatever the input."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from auditor.readers.base import Read
from auditor.readers.placement import _frame as placement_frame
from auditor.readers.power import _frame as power_frame

FIXTURES = Path(__file__).parent / "fixtures"


def load(rel: str) -> bytes:
    return (FIXTURES / rel).read_bytes()


def check_read(read: Read[Any], name: str, family: str | None = None) -> None:
    """What holds for any Read: faults name the file and are well-formed; a frame has exactly
    its family's schema."""
    assert isinstance(read, Read)
    for f in read.faults:
        assert f.file == name
        assert f.message and f.severity in ("error", "warning") and f.kind
        assert f.line is None or f.line >= 1
    if read.value is not None and family is not None:
        schema = power_frame.schema() if family == "power" else placement_frame.schema()
        assert isinstance(read.value, pl.DataFrame)
        assert read.value.schema == schema


def kinds(read: Read[Any]) -> list[tuple[str, str, int | None]]:
    return [(f.severity, f.kind, f.line) for f in read.faults]


@pytest.fixture
def fixture_bytes() -> Callable[[str], bytes]:
    return load


@pytest.fixture
def well_formed() -> Callable[..., None]:
    return check_read


@pytest.fixture
def fault_kinds() -> Callable[[Read[Any]], list[tuple[str, str, int | None]]]:
    return kinds
