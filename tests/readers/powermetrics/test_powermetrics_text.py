"""powermetrics text reader: every real fixture, with figures read off the files by hand,
malformed variants, and generated logs."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.readers.power import powermetrics_text as R

T = "powermetrics/text/"


def read(fixture_bytes, rel, **kw):
    return R.read(fixture_bytes(T + rel), name=rel, **kw)


def test_m1max_one_sample(fixture_bytes, well_formed):
    r = read(fixture_bytes, "power-server_sonoma-m1max.txt")
    well_formed(r, "power-server_sonoma-m1max.txt", "power")
    f = r.value
    # line 8: (Mon Oct 23 16:51:12 2023 +0200) (1012.07ms elapsed); lines 175-178
    assert f["source"].to_list() == [
        "CPU Power",
        "GPU Power",
        "ANE Power",
        "Combined Power (CPU + GPU + ANE)",
    ]
    assert f["domain"].to_list() == ["cpu", "gpu", "ane", "combined"]
    assert f["watts"].to_list() == pytest.approx([0.211, 0.147, 0.0, 0.359])
    assert f["line"].to_list() == [175, 176, 177, 178]
    assert set(f["end"]) == {datetime(2023, 10, 23, 14, 51, 12, tzinfo=UTC)}
    assert set(f["interval_s"]) == {1.01207}
    assert f["energy_j"][0] == pytest.approx(0.211 * 1.01207)
    assert f["start"][0] == datetime(2023, 10, 23, 14, 51, 10, 987930, tzinfo=UTC)
    assert r.meta["machine_model"] == "MacBookPro18,4" and r.meta["units"] == ["mW"]
    assert [x.kind for x in r.faults] == ["coverage"]


def test_monterey_sample_without_power_and_package_line(fixture_bytes, fault_kinds):
    r = read(fixture_bytes, "power-server_monterey-m2.txt")
    f = r.value
    # the header at line 8 has only tasks; the one at line 18 (+0100, 1002.80 ms) has power
    assert r.meta["samples"] == 2 and r.meta["samples_with_power"] == 1
    assert f.height == 8
    assert dict(zip(f["source"], f["domain"], strict=True)) == {
        "E-Cluster Power": "other",
        "P-Cluster Power": "other",
        "ANE Power": "ane",
        "DRAM Power": "dram",
        "DCS Power": "dcs",
        "CPU Power": "cpu",
        "GPU Power": "gpu",
        "Package Power": "package",
    }
    assert f.filter(pl.col("domain") == "package")["watts"].item() == 0.025
    assert set(f["end"]) == {datetime(2023, 11, 28, 10, 28, 55, tzinfo=UTC)}
    assert ("warning", "empty", 8) in fault_kinds(r)
    # the file has no final line end
    assert ("warning", "truncated", 68) in fault_kinds(r)


def test_intel_package_power_in_watts(fixture_bytes):
    r = read(fixture_bytes, "power-server_sonoma-intel.txt")
    f = r.value
    assert f.rows() == [
        (
            datetime(2024, 1, 15, 17, 21, 30, 997620, tzinfo=UTC),
            datetime(2024, 1, 15, 17, 21, 32, tzinfo=UTC),
            1.00238,
            "package",
            None,
            8.53,
            pytest.approx(8.53 * 1.00238),
            "Intel energy model derived package power (CPUs+GT+SA)",
            21,
            "interval",
            "energy",
            "powermetrics",
            "cpu,gpu",
            0,
            None,
            None,
        )
    ]
    assert r.meta["units"] == ["W"]


def test_summary_only_is_unusable(fixture_bytes):
    r = read(fixture_bytes, "power-server_tahoe-m4-summary.txt")
    assert r.value is None
    assert r.meta["samples"] == 0
    assert r.meta["summary_blocks"] == [
        {
            "line": 8,
            "elapsed_ms": 10458.15,
            "readings_w": {
                "CPU Power": 0.42,
                "GPU Power": 0.098,
                "ANE Power": 0.0,
                "Combined Power (CPU + GPU + ANE)": 0.519,
            },
        }
    ]
    assert [(x.severity, x.kind) for x in r.errors] == [("error", "empty")]
    assert "Summary" in r.errors[0].message


def test_a_sample_of_the_task_table_alone_says_so(fixture_bytes):
    """DERIVED: the Monterey M2 log cut after its first sample, which holds the task table
    alone (line 8): refused, for what the file holds (a sample without a power line), never
    for Summary blocks it does not have."""
    text = fixture_bytes(T + "power-server_monterey-m2.txt").decode()
    lines = text.split("\n")
    second = [i for i, ln in enumerate(lines) if ln.startswith("*** Sampled")][1]
    r = R.read(("\n".join(lines[:second]) + "\n").encode(), name="tasks.txt")
    assert r.value is None and r.meta["samples"] == 1
    message = next(x.message for x in r.errors if x.kind == "empty")
    assert "1 sample(s), none with a power line" in message and "task table" in message
    assert "Summary" not in message


def test_gpu_power_twice_gives_one_row(fixture_bytes):
    r = read(fixture_bytes, "powermetrics-go_m4_sample.log")
    f = r.value
    # GPU Power: 28 mW at line 186 (processor section) and again at line 197 (GPU section)
    assert f.filter(pl.col("source") == "GPU Power")["line"].to_list() == [186]
    assert f["watts"].to_list() == pytest.approx([0.954, 0.028, 0.0, 0.983])
    assert set(f["interval_s"]) == {5.02196}
    assert set(f["end"]) == {datetime(2025, 11, 8, 6, 54, 21, tzinfo=UTC)}
    assert not [x for x in r.faults if x.kind == "duplicate"]


SAMPLE = (
    "*** Sampled system activity ({date}) ({ms}ms elapsed) ***\n\n"
    "**** Processor usage ****\n\nCPU Power: {cpu} mW\nGPU Power: {gpu} mW\n"
    "ANE Power: 0 mW\nCombined Power (CPU + GPU + ANE): {comb} mW\n\n"
)


def sample(date="Mon Oct 23 16:51:12 2023 +0200", ms="1000.00", cpu=100, gpu=50):
    return SAMPLE.format(date=date, ms=ms, cpu=cpu, gpu=gpu, comb=cpu + gpu)


def test_truncated_mid_line_keeps_what_was_read(fixture_bytes, fault_kinds):
    data = fixture_bytes(T + "power-server_sonoma-m1max.txt")
    cut = data[: data.index(b"GPU Power: 147") + 7]
    r = R.read(cut, name="cut.txt")
    assert r.value["source"].to_list() == ["CPU Power"]
    assert ("warning", "truncated", 176) in fault_kinds(r)


def test_last_sample_with_fewer_lines_is_reported():
    text = sample() + sample(date="Mon Oct 23 16:51:13 2023 +0200")
    text = text[: text.rindex("ANE Power")]
    r = R.read(text.encode(), name="x.txt")
    assert r.value.height == 6
    assert any(f.kind == "truncated" and f.line == 10 for f in r.faults)


def test_zone_abbreviation_needs_the_offset():
    text = sample(date="Mon Oct 23 16:51:12 2023 CEST").encode()
    r = R.read(text, name="x.txt")
    assert r.value["end"][0] == datetime(2023, 10, 23, 16, 51, 12, tzinfo=UTC)
    assert [f.kind for f in r.faults if f.kind == "timezone"] == ["timezone"]
    assert r.meta["timezone_assumed"] == "UTC"
    r = R.read(text, name="x.txt", local_utc_offset="+02:00")
    assert r.value["end"][0] == datetime(2023, 10, 23, 14, 51, 12, tzinfo=UTC)
    assert not [f for f in r.faults if f.kind == "timezone"]


def test_duplicate_label_with_another_value_keeps_the_first():
    text = sample() + "**** GPU usage ****\nGPU Power: 77 mW\n"
    r = R.read(text.encode(), name="x.txt")
    assert r.value.filter(pl.col("source") == "GPU Power")["watts"].item() == 0.05
    dup = [f for f in r.faults if f.kind == "duplicate"]
    assert len(dup) == 1 and dup[0].line == 11 and "line 6 (0.05 W) is kept" in dup[0].message


def test_time_going_back_and_power_outside_a_sample():
    text = (
        "CPU Power: 5 mW\n"
        + sample(date="Mon Oct 23 16:51:12 2023 +0200")
        + sample(date="Mon Oct 23 16:51:10 2023 +0200")
    )
    r = R.read(text.encode(), name="x.txt")
    assert r.value["end"].n_unique() == 2
    assert any(f.kind == "syntax" and f.line == 1 for f in r.faults)
    assert any(f.kind == "order" and f.line == 11 for f in r.faults)


def test_unreadable_header_date():
    r = R.read(sample(date="someday").encode(), name="x.txt")
    assert any(f.kind == "type" and f.line == 1 for f in r.faults)
    assert r.value["end"].null_count() == r.value.height


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 99999), st.integers(0, 99999), st.floats(1, 100000, allow_nan=False)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_generated_logs(samples):
    text = "".join(
        sample(date=f"Mon Oct 23 16:51:{i:02d} 2023 +0000", ms=f"{ms:.2f}", cpu=c, gpu=g)
        for i, (c, g, ms) in enumerate(samples)
    )
    r = R.read(text.encode(), name="gen.txt")
    f = r.value
    assert f.height == 4 * len(samples)
    cpu = f.filter(pl.col("domain") == "cpu")
    assert cpu["watts"].to_list() == pytest.approx([c / 1000 for c, _, _ in samples])
    for row in cpu.iter_rows(named=True):
        assert row["energy_j"] == pytest.approx(row["watts"] * row["interval_s"])
        assert row["start"] < row["end"]
    assert not [x for x in r.faults if x.severity == "error"]
