"""`audit cost`: the package calculation of A9 and its refusals of bad input (exit 2)."""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.cli import main
from auditor.cost import cost_command
from auditor.errors import AuditorError
from auditor.protocols.a.economics import PackageCost, parse_count, usd

OFFERS = {
    "schema_version": "1", "example": True,
    "offers": [
        {"offer_id": "h100-7d", "provider": "Acme", "gpu_model": "H100 80GB", "duration_days": 7,
         "price_per_lot_usd_minor": 123450, "gpus_per_lot": 1, "price_basis": "lot"},
        {"offer_id": "b200-30d", "gpu_model": "NVIDIA B200", "duration_days": 30,
         "price_per_lot_usd_minor": 4_000_000, "gpus_per_lot": 2, "price_basis": "lot"},
        {"offer_id": "b200-per-gpu", "gpu_model": "B200", "duration_days": 3,
         "price_per_lot_usd_minor": 50_000, "gpus_per_lot": 2, "price_basis": "gpu"},
        {"offer_id": "b200-one-gpu", "gpu_model": "B200", "duration_days": 3,
         "price_per_lot_usd_minor": 50_000, "gpus_per_lot": 1, "price_basis": "lot"},
        {"offer_id": "h100-per-gpu", "gpu_model": "H100", "duration_days": 3,
         "price_per_lot_usd_minor": 9_000, "gpus_per_lot": 8, "price_basis": "gpu"},
    ],
}


@pytest.fixture
def offers(tmp_path) -> Path:
    p = tmp_path / "offers.json"
    p.write_text(json.dumps(OFFERS))
    return p


def run_cli(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["audit", "cost", *args])
    with pytest.raises(SystemExit) as exc:
        main()
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def test_package_total_only_without_accepted_results(offers):
    out = cost_command(offers, "h100-7d", "3", None, "text")
    assert "package total    $3,703.50 (370350 cents)" in out
    assert "cost per accepted corpus" not in out
    assert "only the package cost" in out and "no cadence" in out
    assert "examples, not quotes" in out


def test_cost_per_accepted_corpus(offers):
    data = json.loads(cost_command(offers, "b200-30d", "2", "4", "json"))
    assert data["package_total_usd_minor"] == 8_000_000
    assert data["cost_per_accepted_corpus_usd_minor"] == "2000000.00"
    text = cost_command(offers, "b200-30d", "2", "4", "text")
    assert "cost per accepted corpus  $20,000.00 (2000000.00 cents)" in text


def test_uneven_division_keeps_hundredths_of_a_cent(offers):
    data = json.loads(cost_command(offers, "h100-7d", "3", "7", "json"))
    assert data["cost_per_accepted_corpus_usd_minor"] == "52907.14"  # 370350 / 7


def test_zero_accepted_results_says_no_per_corpus_cost(offers):
    data = json.loads(cost_command(offers, "h100-7d", "1", "0", "json"))
    assert data["cost_per_accepted_corpus_usd_minor"] is None
    assert data["package_total_usd_minor"] == 123450
    assert "no cost per accepted corpus can be computed" in data["note"]


def test_json_without_accepted_results(offers):
    data = json.loads(cost_command(offers, "h100-7d", "1", None, "json"))
    assert data["accepted_results"] is None
    assert data["cost_per_accepted_corpus_usd_minor"] is None
    assert set(data) >= {"offer_id", "lots", "duration_days", "gpus_per_lot"}


@pytest.mark.parametrize(("args", "message"), [
    (["--offer", "nope", "--lots", "1"],
     "no offer 'nope'; known offers: b200-30d, b200-one-gpu, b200-per-gpu, h100-7d, "
     "h100-per-gpu"),
    (["--offer", "h100-7d", "--lots", "-1"], "--lots must be a positive whole number, got '-1'"),
    (["--offer", "h100-7d", "--lots", "0"], "--lots must be a positive whole number, got '0'"),
    (["--offer", "h100-7d", "--lots", "1.5"], "got '1.5'"),
    (["--offer", "h100-7d", "--lots", "two"], "got 'two'"),
    (["--offer", "h100-7d", "--lots", "2", "--accepted-results", "-3"],
     "--accepted-results must be a non-negative whole number, got '-3'"),
    (["--offer", "h100-7d", "--lots", "2", "--accepted-results", "0.5"], "got '0.5'"),
    (["--offer", "b200-per-gpu", "--lots", "1"],
     "priced per GPU (price_basis 'gpu'); A9 compares whole lots: quote the price of the lot "
     "(a B200 lot is two GPUs"),
    (["--offer", "h100-per-gpu", "--lots", "1"], "priced per GPU"),
    (["--offer", "b200-one-gpu", "--lots", "1"], "a B200 lot holds 2 GPUs (A9.2)"),
])
def test_bad_input_exits_2_with_a_clear_message(monkeypatch, capsys, offers, args, message):
    code, out, err = run_cli(monkeypatch, capsys, "--offers", str(offers), *args)
    assert code == 2
    assert out == ""
    assert message in err, err
    assert "Traceback" not in err


def test_cli_success_exits_0(monkeypatch, capsys, offers):
    code, out, _ = run_cli(monkeypatch, capsys, "--offers", str(offers), "--offer", "h100-7d",
                           "--lots", "2", "--format", "json")
    assert code == 0
    assert json.loads(out)["package_total_usd_minor"] == 246900


def test_offers_file_not_matching_the_schema(tmp_path):
    p = tmp_path / "offers.json"
    bad = json.loads(json.dumps(OFFERS))
    bad["offers"][0]["duration_days"] = 5
    p.write_text(json.dumps(bad))
    with pytest.raises(AuditorError, match=r"offers\.json: does not match offers\.schema\.json "
                                           r"at /offers/0/duration_days"):
        cost_command(p, "h100-7d", "1", None, "text")


def test_offers_file_not_json(tmp_path):
    p = tmp_path / "offers.json"
    p.write_text("{not json")
    with pytest.raises(AuditorError, match="not valid JSON"):
        cost_command(p, "h100-7d", "1", None, "text")


@given(st.text(max_size=12))
def test_parse_count_accepts_exactly_whole_numbers(text):
    stripped = text.strip()
    is_uint = stripped.isascii() and stripped.isdigit()
    try:
        n = parse_count(text, "--lots", allow_zero=True)
    except AuditorError:
        assert not is_uint
    else:
        assert is_uint and n == int(stripped)


@given(price=st.integers(0, 10**9), lots=st.integers(1, 1000), acc=st.integers(1, 10**6))
def test_per_corpus_is_the_package_total_over_the_count(price, lots, acc):
    pc = PackageCost({"price_per_lot_usd_minor": price}, lots, price * lots, acc)
    per = pc.per_corpus_usd_minor
    assert per is not None
    assert abs(per * acc - price * lots) <= Decimal("0.005") * acc
    assert usd(price * lots).startswith("$")
