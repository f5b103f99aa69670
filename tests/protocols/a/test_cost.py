"""`audit cost`: the package calculation of A9 and its refusals of bad input (exit 2)."""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import schemas
from auditor.cli import main
from auditor.cost import cost_command
from auditor.errors import AuditorError
from auditor.protocols.a.economics import PackageCost, parse_count, usd

OFFERS = {
    "schema_version": "1",
    "example": True,
    "offers": [
        {
            "offer_id": "h100-7d",
            "provider": "Acme",
            "gpu_model": "H100 80GB",
            "duration_days": 7,
            "price_per_lot_usd_minor": 123450,
            "gpus_per_lot": 1,
            "price_basis": "lot",
        },
        {
            "offer_id": "b200-30d",
            "gpu_model": "NVIDIA B200",
            "duration_days": 30,
            "price_per_lot_usd_minor": 4_000_000,
            "gpus_per_lot": 2,
            "price_basis": "lot",
        },
        {
            "offer_id": "b200-per-gpu",
            "gpu_model": "B200",
            "duration_days": 3,
            "price_per_lot_usd_minor": 50_000,
            "gpus_per_lot": 2,
            "price_basis": "gpu",
        },
        {
            "offer_id": "b200-one-gpu",
            "gpu_model": "B200",
            "duration_days": 3,
            "price_per_lot_usd_minor": 50_000,
            "gpus_per_lot": 1,
            "price_basis": "lot",
        },
        {
            "offer_id": "h100-per-gpu",
            "gpu_model": "H100",
            "duration_days": 3,
            "price_per_lot_usd_minor": 9_000,
            "gpus_per_lot": 8,
            "price_basis": "gpu",
        },
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


def _json(*args: str | None) -> dict:
    """`audit cost --format json`, checked against schemas/cost-result.schema.json."""
    doc = json.loads(cost_command(*args, "json"))
    assert list(schemas.validator("cost_result").iter_errors(doc)) == []
    return doc


def test_cost_per_accepted_corpus(offers):
    data = _json(offers, "b200-30d", "2", "4")
    (offer,) = data["offers"]
    assert offer["package_total_usd_minor"] == 8_000_000
    assert offer["cost_per_accepted_corpus_usd_minor"] == 2_000_000
    text = cost_command(offers, "b200-30d", "2", "4", "text")
    assert "cost per accepted corpus  $20,000.00 = package total / 4 accepted corpora" in text


def test_uneven_division_money_in_whole_cents_and_text_to_a_hundredth(offers):
    (offer,) = _json(offers, "h100-7d", "3", "7")["offers"]
    assert offer["cost_per_accepted_corpus_usd_minor"] == 52907  # 370350 / 7 = 52907.14
    assert offer["cost_per_accepted_corpus_text"] == "$529.0714"


def test_zero_accepted_results_says_no_per_corpus_cost(offers):
    data = _json(offers, "h100-7d", "1", "0")
    (offer,) = data["offers"]
    assert "cost_per_accepted_corpus_usd_minor" not in offer
    assert offer["package_total_usd_minor"] == 123450
    assert "no cost per accepted corpus can be computed" in data["note"]


def test_json_without_accepted_results_leaves_the_figure_out(offers):
    data = _json(offers, "h100-7d", "1", None)
    assert "accepted_results" not in data
    assert "cost_per_accepted_corpus_usd_minor" not in data["offers"][0]
    assert set(data["offers"][0]) >= {"offer_id", "lots", "duration_days", "gpus_per_lot"}


def test_every_offer_in_one_table_when_no_offer_is_named(offers):
    data = _json(offers, None, "2", "4")
    by_id = {o["offer_id"]: o for o in data["offers"]}
    assert list(by_id) == [o["offer_id"] for o in OFFERS["offers"]]
    assert by_id["h100-7d"]["cost_per_accepted_corpus_usd_minor"] == 61725  # 246900 / 4
    assert (
        not by_id["b200-per-gpu"]["costed"] and "priced per GPU" in by_id["b200-per-gpu"]["why_not"]
    )
    text = cost_command(offers, None, "2", "4", "text").splitlines()
    head = next(i for i, line in enumerate(text) if line.startswith("offer "))
    rows = text[head + 1 : head + 1 + len(OFFERS["offers"])]
    assert [r.split()[0] for r in rows] == list(by_id)
    # aligned: the package total column ends at the same place on every costed row
    ends = {r.index("$2,469.00") + len("$2,469.00") for r in rows if "h100-7d" in r}
    ends |= {r.index("$80,000.00") + len("$80,000.00") for r in rows if "b200-30d" in r}
    assert len(ends) == 1
    assert "not costed" in next(r for r in rows if r.startswith("b200-per-gpu"))


def test_a_cpu_offer_is_costed_like_any_lot(tmp_path):
    p = tmp_path / "offers.json"
    p.write_text(
        json.dumps(
            {
                "schema_version": "1",
                "offers": [
                    {
                        "offer_id": "cpu-7d",
                        "gpu_model": "none (CPU only)",
                        "device_class": "cpu",
                        "machine": "2 vCPU",
                        "duration_days": 7,
                        "price_per_lot_usd_minor": 1200,
                        "gpus_per_lot": 0,
                        "price_basis": "lot",
                    }
                ],
            }
        )
    )
    (offer,) = _json(p, None, "1", "3")["offers"]
    assert offer["device_class"] == "cpu" and offer["cost_per_accepted_corpus_usd_minor"] == 400
    assert "CPU only (2 vCPU)" in cost_command(p, None, "1", "3", "text")


def test_a_gpu_offer_of_zero_gpus_is_refused_by_the_schema(tmp_path):
    p = tmp_path / "offers.json"
    bad = json.loads(json.dumps(OFFERS))
    bad["offers"][0]["gpus_per_lot"] = 0
    p.write_text(json.dumps(bad))
    with pytest.raises(AuditorError, match="gpus_per_lot"):
        cost_command(p, None, "1", None, "text")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--offer", "nope", "--lots", "1"],
            "no offer 'nope'; known offers: b200-30d, b200-one-gpu, b200-per-gpu, h100-7d, "
            "h100-per-gpu",
        ),
        # typed options: click names the option, the type says what it expects
        (
            ["--offer", "h100-7d", "--lots", "-1"],
            "Invalid value for '--lots': must be a positive whole number, got '-1'",
        ),
        (
            ["--offer", "h100-7d", "--lots", "0"],
            "Invalid value for '--lots': must be a positive whole number, got '0'",
        ),
        (["--offer", "h100-7d", "--lots", "1.5"], "got '1.5'"),
        (["--offer", "h100-7d", "--lots", "two"], "got 'two'"),
        (
            ["--offer", "h100-7d", "--lots", "2", "--accepted-results", "-3"],
            "Invalid value for '--accepted-results': must be a non-negative whole number, got '-3'",
        ),
        (["--offer", "h100-7d", "--lots", "2", "--accepted-results", "0.5"], "got '0.5'"),
        (
            ["--offer", "b200-per-gpu", "--lots", "1"],
            "priced per GPU (price_basis 'gpu'); A9 compares whole lots: quote the price of the "
            "lot (a B200 lot is two GPUs",
        ),
        (["--offer", "h100-per-gpu", "--lots", "1"], "priced per GPU"),
        (["--offer", "b200-one-gpu", "--lots", "1"], "a B200 lot holds 2 GPUs (A9.2)"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(monkeypatch, capsys, offers, args, message):
    code, out, err = run_cli(monkeypatch, capsys, "--offers", str(offers), *args)
    assert code == 2
    assert out == ""
    assert message in err, err
    assert "Traceback" not in err


def test_cli_success_exits_0(monkeypatch, capsys, offers):
    code, out, _ = run_cli(
        monkeypatch,
        capsys,
        "--offers",
        str(offers),
        "--offer",
        "h100-7d",
        "--lots",
        "2",
        "--format",
        "json",
    )
    assert code == 0
    assert json.loads(out)["offers"][0]["package_total_usd_minor"] == 246900


def test_cli_json_errors_go_to_stderr_as_json(monkeypatch, capsys, offers):
    code, out, err = run_cli(
        monkeypatch, capsys, "--offers", str(offers), "--offer", "nope", "--format", "json"
    )
    assert code == 2 and out == ""
    doc = json.loads(err)
    assert list(schemas.validator("error").iter_errors(doc)) == []
    assert doc["error"]["kind"] == "usage" and "no offer 'nope'" in doc["error"]["message"]


def test_offers_file_not_matching_the_schema(tmp_path):
    p = tmp_path / "offers.json"
    bad = json.loads(json.dumps(OFFERS))
    bad["offers"][0]["duration_days"] = 5
    p.write_text(json.dumps(bad))
    with pytest.raises(
        AuditorError,
        match=r"offers\.json: does not match offers\.schema\.json "
        r"at /offers/0/duration_days",
    ):
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
