"""Presentation helpers every report part shares (the run report's shared sections, each
protocol's own sections, the comparison report): how a missing value reads, how a nested
value is looked up, how a value becomes JSON-safe view-model data, and how numbers, times,
rates, shares and money are written (one way on every page: `15,575 texts/s`, `0.512 s`,
`98.24 %`, `$1,234.56` from integer minor units). It imports nothing of
the auditor, so `auditor.report` and the protocols' report parts both use it without
importing each other."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

NOT_RECORDED = "not recorded"
"""What a value the run does not record reads as."""


_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str | None) -> list[Any]:
    """TEXT's sort key with its runs of digits compared as numbers, so that variants read
    batch-1, batch-8, batch-32 (not batch-1, batch-32, batch-8) in every report and table;
    `re.split` with a group alternates text and digits, so positions never mix types."""
    return [
        int(part) if i % 2 else part.lower() for i, part in enumerate(_DIGITS.split(text or ""))
    ]


def json_safe(value: Any) -> Any:
    """A JSON-safe copy (tuples to lists, unknown objects to str)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return str(value)


def lookup(d: Any, *keys: str, default: Any = None) -> Any:
    for k in keys:
        if not isinstance(d, Mapping) or k not in d:
            return default
        d = d[k]
    return d


# -- numbers, money and shares: one way everywhere (run report and comparison) --------------

DASH = "—"
"""What an empty cell of a table reads as (a figure that does not apply)."""

_CURRENCIES: dict[str, tuple[str, int]] = {
    "USD": ("$", 2),
    "EUR": ("€", 2),
    "GBP": ("£", 2),
    "JPY": ("¥", 0),
}
"""ISO 4217 code -> (symbol, digits of its minor unit)."""


def count(n: int | None) -> str:
    """`15575` -> `15,575`: whole numbers with thousands separators."""
    return NOT_RECORDED if n is None else f"{n:,}"


def number(x: float | None, unit: str = "", *, digits: int = 4) -> str:
    """A measured figure to DIGITS significant digits, thousands separated, never in
    exponent notation: `15575.4` -> `15,575`, `0.012345` -> `0.01235`, `98.24` -> `98.24`;
    UNIT after a space."""
    if x is None:
        return NOT_RECORDED
    if x == 0 or not abs(x) < float("inf"):
        text = f"{x:g}"
    else:
        from math import floor, log10

        decimals = max(0, digits - 1 - floor(log10(abs(x))))
        text = f"{x:,.{decimals}f}"
    return f"{text} {unit}" if unit else text


def seconds(x: float | None) -> str:
    """`0.51234` -> `0.512 s`: times to the millisecond, as the run report prints them."""
    return NOT_RECORDED if x is None else f"{x:,.3f} s"


def seconds_range(lo: float | None, hi: float | None) -> str:
    """`0.501`, `0.553` -> `0.501–0.553 s`."""
    if lo is None or hi is None:
        return NOT_RECORDED
    return f"{lo:,.3f}–{hi:,.3f} s"


def rate(per_s: float | None, unit: str) -> str:
    """`15575.4, "texts/s"` -> `15,575 texts/s`; below 100 one decimal: `12.3 texts/s`."""
    if per_s is None:
        return NOT_RECORDED
    return f"{per_s:,.0f} {unit}" if abs(per_s) >= 100 else f"{per_s:,.1f} {unit}"


def percent(share: float | None, decimals: int = 2) -> str:
    """A share of 1: `0.98243` -> `98.24 %`."""
    return NOT_RECORDED if share is None else f"{100 * share:.{decimals}f} %"


def money(minor: int | None, currency: str | None = "USD") -> str:
    """An amount in integer minor units of CURRENCY: `123456, "USD"` -> `$1,234.56`; a
    currency without a symbol here: `123456, "CHF"` -> `1,234.56 CHF`. Money is never a
    float: a float (or bool) is refused, so a fraction of a cent cannot slip into a page."""
    if minor is None:
        return NOT_RECORDED
    if isinstance(minor, bool) or not isinstance(minor, int):
        raise TypeError(f"money is integer minor units, not {type(minor).__name__}")
    code = currency or "USD"
    symbol, places = _CURRENCIES.get(code, ("", 2))
    sign, units = ("-" if minor < 0 else ""), abs(minor)
    whole, frac = divmod(units, 10**places)
    text = f"{whole:,}" + (f".{frac:0{places}d}" if places else "")
    return f"{sign}{symbol}{text}" if symbol else f"{sign}{text} {code}"
