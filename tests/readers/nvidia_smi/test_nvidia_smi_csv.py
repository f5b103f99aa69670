"""nvidia-smi --query-gpu CSV reader: every real query file, with figures read off the files
by hand, the malformed variants of the issue, and generated logs."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.readers.power import nvidia_smi_csv as R

N = "nvidia-smi/"
AVG, INST, DRAW = "power.draw.average [W]", "power.draw.instant [W]", "power.draw [W]"


def readings(frame: pl.DataFrame, source: str) -> list[float]:
    return frame.filter(pl.col("source") == source).sort("line")["watts"].to_list()


def test_8xh100(fixture_bytes, well_formed, fault_kinds):
    r = R.read(
        fixture_bytes(N + "VirtualClient_query-gpu-8xH100.csv"),
        name="8x.csv",
        local_utc_offset="+00:00",
    )
    well_formed(r, "8x.csv", "power")
    f = r.value
    # 8 rows (lines 2-9), GPU 0-7; rows 6-9 repeat rows 2-5's times and bus ids
    assert sorted(set(f["device"])) == list(range(8)) and r.meta["units_in_cells"] is False
    assert readings(f, AVG) == [70.89, 71.71, 70.78, 72.17] * 2
    assert readings(f, INST) == [70.68, 72.05, 70.97, 71.44] * 2
    assert f["end"].min() == datetime(2024, 3, 15, 13, 57, 59, 791000, tzinfo=UTC)
    assert f["end"].max() == datetime(2024, 3, 15, 13, 57, 59, 861000, tzinfo=UTC)
    assert [k for k in fault_kinds(r) if k[1] == "duplicate"] == [
        ("warning", "duplicate", n) for n in (6, 7, 8, 9)
    ]
    assert r.meta["devices"][4]["pci.bus_id"] == "00000000:0A:00.0"


def test_t4_na_and_h100(fixture_bytes, fault_kinds):
    r = R.read(fixture_bytes(N + "VirtualClient_query-gpu-1xT4-NA.csv"), name="t4.csv")
    # power.draw.average [W] is [N/A] on Turing; instant 9.31
    assert r.value["source"].to_list() == [INST] and r.value["watts"].to_list() == [9.31]
    assert r.meta["unavailable_fields"] == [AVG]
    assert ("warning", "missing", 2) in fault_kinds(r)
    r = R.read(fixture_bytes(N + "VirtualClient_query-gpu-1xH100.csv"), name="h.csv")
    assert readings(r.value, AVG) == [70.89] and readings(r.value, INST) == [70.68]


@pytest.mark.parametrize(
    ("name", "draw", "avg", "inst", "when"),
    [
        ("h100-80gb_590.48.01", 631.95, 631.95, 625.68, (2026, 7, 14, 8, 12, 53, 353000)),
        ("h100-mig_590.48.01", 433.78, 433.78, 447.35, (2026, 7, 14, 9, 0, 44, 579000)),
        ("rtx4080super_595.71.05", 84.24, 84.24, 86.41, (2026, 6, 26, 11, 59, 58, 761000)),
        ("win_rtx2080super_591.86", 97.43, None, 97.43, (2026, 6, 22, 23, 4, 33, 297000)),
    ],
)
def test_all_fields_with_units_in_cells(fixture_bytes, name, draw, avg, inst, when):
    r = R.read(
        fixture_bytes(N + f"query-gpu_all-fields_load_{name}.csv"),
        name="q.csv",
        local_utc_offset="+00:00",
    )
    f = r.value
    assert r.meta["units_in_cells"] is True and r.meta["fields"] > 200
    assert readings(f, DRAW) == [draw] and readings(f, INST) == [inst]
    assert readings(f, AVG) == ([avg] if avg else [])
    assert set(f["end"]) == {datetime(*when, tzinfo=UTC)}
    assert "module.power.draw.instant [W]" in r.meta["unavailable_fields"]


def _rows(fixture_bytes):
    return fixture_bytes(N + "VirtualClient_query-gpu-8xH100.csv").decode().split("\n")


def test_na_everywhere_is_unusable(fixture_bytes):
    lines = _rows(fixture_bytes)
    header = lines[0].split(", ")
    cols = [header.index(AVG), header.index(INST)]
    na = [lines[0]] + [
        ", ".join("[N/A]" if i in cols else c for i, c in enumerate(ln.split(", ")))
        for ln in lines[1:]
    ]
    r = R.read("\n".join(na).encode(), name="na.csv")
    assert r.value is None
    assert [f.kind for f in r.errors] == ["empty"]
    assert sorted(f.field for f in r.faults if f.kind == "missing") == [AVG, INST]
    assert "8 of 8 rows" in next(f for f in r.faults if f.kind == "missing").message


def test_truncated_mid_line(fixture_bytes, fault_kinds):
    lines = _rows(fixture_bytes)
    cut = "\n".join(lines[:5]) + "\n" + lines[5][:60]
    r = R.read(cut.encode(), name="cut.csv")
    assert sorted(set(r.value["line"])) == [2, 3, 4, 5]
    assert ("error", "truncated", 6) in fault_kinds(r)


def test_shuffled_columns(fixture_bytes):
    lines = _rows(fixture_bytes)
    width = len(lines[0].split(", "))
    order = random.Random(3).sample(range(width), width)
    moved = "\n".join(", ".join(ln.split(", ")[i] for i in order) for ln in lines)
    a = R.read("\n".join(lines).encode(), name="a.csv").value
    b = R.read(moved.encode(), name="b.csv").value
    assert b.sort("line", "source").equals(a.sort("line", "source"))


def test_repeated_row_header_and_time_going_back(fixture_bytes, fault_kinds):
    lines = _rows(fixture_bytes)[:3]  # header, GPU 0, GPU 1
    later = lines[1].replace("13:57:59.791", "13:57:58.000")
    text = "\n".join([*lines, lines[2], lines[0], later]) + "\n"
    r = R.read(text.encode(), name="x.csv")
    kinds = fault_kinds(r)
    assert ("warning", "duplicate", 4) in kinds  # line 4 repeats line 3
    assert ("warning", "header", 5) in kinds  # the header again
    assert ("warning", "order", 6) in kinds  # GPU 0 goes back in time
    assert r.value.filter(pl.col("line") == 4).is_empty()


def test_wrong_units(fixture_bytes, fault_kinds):
    lines = _rows(fixture_bytes)[:3]
    r = R.read(
        "\n".join([lines[0].replace(AVG, "power.draw.average [mW]"), *lines[1:]]).encode(),
        name="x.csv",
    )
    assert ("error", "units", 1) in fault_kinds(r)
    assert set(r.value["source"]) == {INST}
    bad = lines[1].replace("70.68", "70.68 kW")
    r = R.read("\n".join([lines[0], bad]).encode(), name="x.csv")
    assert ("error", "units", 2) in fault_kinds(r)


def test_no_timestamp_field():
    r = R.read(b"index, power.draw [W]\n0, 100.5\n0, 101.5\n", name="x.csv")
    assert r.meta["timestamps"] is False
    assert r.value["end"].null_count() == 2 and r.value["watts"].to_list() == [100.5, 101.5]
    assert any(f.kind == "coverage" for f in r.faults)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.one_of(st.none(), st.floats(0, 1000)), st.integers(1, 500)),
        min_size=1,
        max_size=30,
    ),
    st.booleans(),
)
def test_generated_logs(rows, units):
    lines = ["timestamp, index, power.draw.instant [W]"]
    ms = 0
    for gpu, watts, step in rows:
        ms += step
        s, m = divmod(ms, 1000)
        cell = "[N/A]" if watts is None else f"{watts:.2f}" + (" W" if units else "")
        lines.append(f"2025/01/02 03:04:{s % 60:02d}.{m:03d}, {gpu}, {cell}")
    # times may repeat per GPU only when the generated steps wrap a minute: keep it simple
    r = R.read(("\n".join(lines)).encode(), name="gen.csv", local_utc_offset="+00:00")
    expected = [round(w, 2) for _, w, _ in rows if w is not None]
    if not expected:
        assert r.value is None
        return
    kept = r.value.sort("line")["watts"].to_list()
    assert len(kept) <= len(expected)
    assert set(kept) <= set(expected)
