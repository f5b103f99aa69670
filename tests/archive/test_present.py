"""Numbers are written one way on every page (auditor.present), and money stays integer minor
units with its currency: the comparison and the run report share these, the archive index
rounds a fractional-cent cost to a whole minor unit half-even."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.archive.frames import minor_units
from auditor.present import (
    NOT_RECORDED,
    count,
    money,
    number,
    percent,
    rate,
    seconds,
    seconds_range,
)


def test_figures_read_the_same_everywhere() -> None:
    assert count(15575) == "15,575"
    assert rate(15575.4, "texts/s") == "15,575 texts/s"
    assert rate(12.34, "texts/s") == "12.3 texts/s"
    assert seconds(0.51234) == "0.512 s"
    assert seconds_range(0.5012, 0.5531) == "0.501–0.553 s"
    assert percent(0.98243) == "98.24 %"
    assert number(0.012345, "J") == "0.01235 J"
    assert number(15575.4) == "15,575"
    assert number(123456.789) == "123,457"  # never 1.235e+05
    assert all(f(None) == NOT_RECORDED for f in (count, seconds, percent, number))


def test_money_is_integer_minor_units_with_its_currency() -> None:
    assert money(123456) == "$1,234.56"
    assert money(5) == "$0.05" and money(-5) == "-$0.05"
    assert money(100, "JPY") == "¥100"
    assert money(123456, "CHF") == "1,234.56 CHF"
    assert money(None) == NOT_RECORDED
    for bad in (1234.0, 34666.6667, True, Decimal("1.5")):
        with pytest.raises(TypeError, match="integer minor units"):
            money(bad)  # type: ignore[arg-type]


def test_a_fractional_cent_cost_is_rounded_half_even_to_a_whole_one() -> None:
    assert minor_units(34666.67) == 34667  # 1,040.00 USD over 3 accepted corpora
    assert minor_units(Decimal("12.50")) == 12 and minor_units(13.5) == 14
    assert minor_units(123456) == 123456 and minor_units(None) is None
    assert isinstance(minor_units(123456.0), int)


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_money_reads_back_to_its_minor_units(minor: int) -> None:
    text = money(minor)
    digits = text.replace("$", "").replace(",", "").replace(".", "").replace("-", "")
    assert int(digits) == abs(minor) and text.startswith("-") == (minor < 0)
