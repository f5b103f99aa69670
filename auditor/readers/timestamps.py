"""RFC 3339 date-times read exactly, in every form the RFC allows: `T` or `t`, `Z` or `z`
or a numeric offset (`+01:00`, `-05:30`), any number of fractional digits (kept to the
nanosecond). Polars' own parser infers one format from the first value and turns the others
(a lower-case `t`, another offset) into null; a run written with local offsets is as valid as
one in UTC, so times are parsed here, value by value, into UTC nanoseconds.

Not `datetime.fromisoformat`, although Python 3.11's reads RFC 3339's usual form: it drops
the digits after the microsecond (`.123456789Z` becomes `.123456`; the ORT profile and the
runner's power records count nanoseconds), refuses a lower-case `z`, and accepts what RFC
3339 does not (a date alone, a week date `2026-W01-2`, the basic `20260102T030405`, a time
without an offset, which would be read as local), so the exact pattern would stay anyway
(tests/readers/test_timestamps_vs_stdlib.py)."""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from datetime import datetime

import polars as pl

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
    r"(?:[Zz]|([+-])(\d{2}):(\d{2}))"
)

DTYPE = pl.Datetime("ns", "UTC")


def epoch_ns(text: object) -> int | None:
    """Nanoseconds since the epoch (UTC) of an RFC 3339 date-time, None when TEXT is not one
    (a leap second, 60, is refused as the schema's format check refuses it)."""
    if not isinstance(text, str):
        return None
    m = _RFC3339.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    frac, sign, off_h, off_m = m.group(7), m.group(8), m.group(9), m.group(10)
    try:
        datetime(year, month, day, hour, minute, second)  # validates the calendar fields
    except ValueError:
        return None
    offset = 0
    if sign is not None:
        if int(off_h) > 23 or int(off_m) > 59:
            return None
        offset = (int(off_h) * 60 + int(off_m)) * 60 * (1 if sign == "+" else -1)
    seconds = calendar.timegm((year, month, day, hour, minute, second)) - offset
    nanos = int((frac or "").ljust(9, "0")[:9])
    return seconds * 1_000_000_000 + nanos


def column(values: Iterable[object], name: str = "") -> pl.Series:
    """A UTC datetime series (ns) of VALUES; null where a value is not RFC 3339."""
    return pl.Series(name, [epoch_ns(v) for v in values], dtype=pl.Int64).cast(DTYPE)


def epoch_s(text: object) -> float | None:
    """`epoch_ns` in seconds (None when TEXT is not an RFC 3339 date-time)."""
    ns = epoch_ns(text)
    return None if ns is None else ns / 1e9
