"""Why `auditor.readers.timestamps` is kept beside the standard library's parser: where
`datetime.fromisoformat` (Python 3.11) and RFC 3339 part ways, ours follows the RFC."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from auditor.readers.timestamps import epoch_ns


def test_same_instant_where_both_read_it() -> None:
    for text in ("2026-01-02T03:04:05Z", "2026-01-02T04:04:05.25+01:00"):
        ours = epoch_ns(text)
        theirs = datetime.fromisoformat(text).astimezone(UTC).timestamp()
        assert ours is not None and abs(ours / 1e9 - theirs) < 1e-6


def test_nanoseconds_kept_where_the_stdlib_drops_them() -> None:
    text = "2026-01-02T03:04:05.123456789Z"
    assert epoch_ns(text) % 1_000_000_000 == 123_456_789
    assert datetime.fromisoformat(text).microsecond == 123_456  # the last 3 digits lost


@pytest.mark.parametrize(
    "text", ["2026-01-02", "2026-W01-2", "20260102T030405", "2026-01-02T03:04:05"]
)
def test_what_rfc_3339_refuses_is_refused(text: str) -> None:
    assert epoch_ns(text) is None
    datetime.fromisoformat(text)  # the stdlib reads it (a naive time: local, not UTC)


def test_lower_case_t_and_z_are_rfc_3339() -> None:
    assert epoch_ns("2026-01-02t03:04:05z") == epoch_ns("2026-01-02T03:04:05Z")
    with pytest.raises(ValueError):
        datetime.fromisoformat("2026-01-02t03:04:05z")
