"""Our runner's NVML/RAPL trace reader, on traces written by hand from
schemas/runner-power-record.schema.json (trial-1.jsonl, rapl-wrap.jsonl beside this file)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schemas
from auditor.readers.power import runner_jsonl as R

HERE = Path(__file__).parent


def test_examples_follow_the_schema():
    for path in HERE.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            schemas.validator("runner_power_record").validate(json.loads(line))


def test_samples_counters_markers_unavailable(well_formed):
    r = R.read((HERE / "trial-1.jsonl").read_bytes(), name="trial-1.jsonl")
    well_formed(r, "trial-1.jsonl", "power")
    f = r.value
    inst = f.filter(pl.col("source") == "nvml:POWER_INSTANT")
    assert inst["watts"].to_list() == [70.5, 71.5, 72.5] and inst["line"].to_list() == [3, 5, 7]
    assert inst["interval_s"].to_list()[1:] == pytest.approx([0.1, 0.1])
    assert inst["interval_s"][0] is None
    assert inst["energy_j"].null_count() == 3
    energy = f.filter(pl.col("source") == "nvml:nvmlDeviceGetTotalEnergyConsumption")
    # 1000000 -> 1000007 -> 1000014 mJ over 0.1 s each: 7 mJ, 70 mW
    assert energy["energy_j"].to_list() == pytest.approx([0.007, 0.007])
    assert energy["watts"].to_list() == pytest.approx([0.07, 0.07])
    assert energy["start"].to_list() == [
        datetime(2025, 3, 1, 10, 0, 0, 100000, tzinfo=UTC),
        datetime(2025, 3, 1, 10, 0, 0, 200000, tzinfo=UTC),
    ]
    assert [m["event"] for m in r.meta["markers"]] == ["window_start", "window_end"]
    assert r.meta["unavailable"][0]["source"] == "rapl" and r.meta["unavailable"][0]["line"] == 1
    assert not r.faults


def test_rapl_wrap(fixture_bytes):
    r = R.read((HERE / "rapl-wrap.jsonl").read_bytes(), name="rapl.jsonl")
    pkg = r.value.filter(pl.col("domain") == "package")
    # +1000000 uJ, then a wrap: 262143328850 - 262143000000 + 671150 = 1000000 uJ
    assert pkg["energy_j"].to_list() == pytest.approx([1.0, 1.0])
    assert pkg["watts"].to_list() == pytest.approx([1.0, 1.0])
    assert r.meta["wraps"] == 1
    assert r.value.filter(pl.col("domain") == "dram")["energy_j"].to_list() == pytest.approx([3.0])


def test_reset_is_a_fault_and_no_row(fault_kinds):
    lines = (HERE / "trial-1.jsonl").read_text().splitlines()
    lines[7] = lines[7].replace("1000014", "12")
    r = R.read("\n".join(lines).encode(), name="t.jsonl")
    assert ("error", "reset", 8) in fault_kinds(r)
    energy = r.value.filter(pl.col("energy_j").is_not_null())
    assert energy["line"].to_list() == [6]


def test_only_unavailable_is_unusable():
    line = (HERE / "trial-1.jsonl").read_text().splitlines()[0]
    r = R.read(line.encode(), name="t.jsonl")
    assert r.value is None
    assert "not readable without root" in r.errors[0].message


def test_line_by_line_path_gives_the_same_frame():
    data = (HERE / "trial-1.jsonl").read_bytes()
    fast = R.read(data, name="t.jsonl").value
    slow = R.read(data.replace(b"\n", b"\r\n"), name="t.jsonl").value
    assert slow.equals(fast)


def test_bad_lines_are_left_out_with_their_line(fault_kinds):
    lines = (HERE / "trial-1.jsonl").read_text().splitlines()
    lines[2] = lines[2].replace("70.5", '"seventy"')  # line 3: wrong type
    lines[4] = lines[4].replace("71.5", "-1")  # line 5: below the minimum
    lines.insert(5, '{"kind": "sample", "t": "yesterday"}')  # line 6: schema
    lines.append('{"kind": "sample", "t": "2025-03-01T10:0')  # line 11: cut
    r = R.read("\n".join(lines).encode(), name="t.jsonl")
    kinds = fault_kinds(r)
    assert ("error", "schema", 3) in kinds and ("error", "schema", 5) in kinds
    assert ("error", "schema", 6) in kinds and ("error", "syntax", 11) in kinds
    assert r.value.filter(pl.col("source") == "nvml:POWER_INSTANT")["line"].to_list() == [8]
    # the vectorized path finds the same minimum violation
    only_minimum = (HERE / "trial-1.jsonl").read_text().replace("71.5", "-1").encode()
    assert ("error", "schema", 5) in fault_kinds(R.read(only_minimum, name="t.jsonl"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5000), min_size=2, max_size=40))
def test_generated_counters_with_wraps(steps):
    top, value, lines = 10_000, 0, []
    for i, step in enumerate(steps):
        value = (value + step) % top
        lines.append(
            json.dumps(
                {
                    "kind": "counter",
                    "t": f"2025-01-01T00:{i // 60:02d}:{i % 60:02d}Z",
                    "source": "rapl",
                    "domain": "package",
                    "device": 0,
                    "field": "energy_uj",
                    "value": value,
                    "unit": "uJ",
                    "max_range": top,
                }
            )
        )
    r = R.read("\n".join(lines).encode(), name="g.jsonl")
    # one wrap per interval at most can be seen: steps below the range are all recovered
    assert r.value["energy_j"].sum() == pytest.approx(sum(steps[1:]) / 1e6)
