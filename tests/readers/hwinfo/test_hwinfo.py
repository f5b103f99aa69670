"""HWiNFO sensor-log reader: both real logs with figures read off the files by hand, the
malformed variants the issue lists, and generated logs."""

from __future__ import annotations

import csv
import random
from datetime import UTC, datetime

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.readers.power import hwinfo as R

RYZEN = "hwinfo/hwInfoAnalyzer_test_Ryzen9950X3D.csv"
DELL = "hwinfo/hwinfo-tui_sensors_DellPrecision5570_head50.csv"


def value(frame: pl.DataFrame, source: str, line: int) -> float:
    return frame.filter((pl.col("source") == source) & (pl.col("line") == line))["watts"].item()


def test_ryzen_log(fixture_bytes, well_formed, fault_kinds):
    r = R.read(fixture_bytes(RYZEN), name="ryzen.csv", local_utc_offset="+02:00")
    well_formed(r, "ryzen.csv", "power")
    f = r.value
    # 14 data rows (lines 2-15), 36 columns in [W], footer at lines 16-17
    assert r.meta["samples"] == 14 and r.meta["power_columns"] == 36
    assert f.height == 14 * 36 and sorted(set(f["line"])) == list(range(2, 16))
    assert r.meta["encoding"] == "utf-8" and r.meta["footer"] is True
    # 14.8.2025 22:30:47.672 -> 22:31:13.457 local (+02:00)
    assert f["end"].min() == datetime(2025, 8, 14, 20, 30, 47, 672000, tzinfo=UTC)
    assert f["end"].max() == datetime(2025, 8, 14, 20, 31, 13, 457000, tzinfo=UTC)
    assert value(f, "CPU Package Power [W]", 2) == 127.223
    assert value(f, "CPU Package Power [W]", 15) == 125.187
    assert value(f, "GPU Power [W]", 2) == 69.334
    assert value(f, "GPU 12VHPWR Power [W]", 15) == 29.930
    # two columns named "GPU Core (NVVDD) Output Power [W]", and "Total Power [W]" twice
    # (one per DIMM): kept apart, each with its sensor group's device
    assert value(f, "GPU Core (NVVDD) Output Power [W] #1", 2) == 30.505
    assert value(f, "GPU Core (NVVDD) Output Power [W] #2", 2) == 32.448
    dram = f.filter(pl.col("domain") == "dram").group_by("source").agg(pl.col("device").first())
    assert dict(dram.iter_rows()) == {"Total Power [W] #1": 1, "Total Power [W] #2": 3}
    domains = f.filter(pl.col("domain") != "other").group_by("domain", "device").len()
    assert set(domains.select("domain", "device").iter_rows()) == {
        ("package", 0),
        ("ppt", 0),
        ("core", 0),
        ("soc", 0),
        ("dram", 1),
        ("dram", 3),
        ("gpu", 0),
        ("gpu", 1),
    }
    # the degree signs of this copy were already U+FFFD
    assert fault_kinds(r) == [("warning", "encoding", 1)]
    # row 3 is 1.782 s after row 2 (22:30:47.672 -> 22:30:49.454)
    assert f.filter(pl.col("line") == 3)["interval_s"].to_list() == pytest.approx([1.782] * 36)
    assert f.filter(pl.col("line") == 2)["interval_s"].null_count() == 36


def test_dell_log_cp1252(fixture_bytes, fault_kinds):
    r = R.read(fixture_bytes(DELL), name="dell.csv")
    f = r.value
    assert r.meta["encoding"] == "cp1252"
    # 50 rows (lines 2-51); 21 columns in [W], 4 of them power limits (PL1/PL2)
    assert r.meta["samples"] == 50 and r.meta["power_columns"] == 17
    assert len(r.meta["skipped_columns"]) == 4
    assert f["end"].min() == datetime(2025, 8, 13, 13, 58, 50, 898000, tzinfo=UTC)
    # "14:0:17.893": minutes not zero-padded
    assert f["end"].max() == datetime(2025, 8, 13, 14, 0, 17, 893000, tzinfo=UTC)
    assert value(f, "CPU Package Power [W]", 2) == 22.979
    assert value(f, "CPU Package Power [W]", 51) == 16.216
    gpu = f.filter(pl.col("domain") == "gpu")
    assert set(gpu["device"]) == {1} and gpu.filter(pl.col("line") == 2)["watts"].item() == 12.616
    battery = f.filter(pl.col("domain") == "battery")
    assert battery["source"].unique().to_list() == ["Charge Rate [W]"]
    assert battery["device"].null_count() == 50 and set(battery["watts"]) == {0.0}
    assert ("warning", "timezone", None) in fault_kinds(r)


def test_crlf_and_utf16_give_the_same_frame(fixture_bytes):
    data = fixture_bytes(DELL)
    base = R.read(data, name="x.csv").value
    crlf = R.read(data.replace(b"\n", b"\r\n"), name="x.csv")
    assert crlf.meta["line_endings"] == "crlf" and crlf.value.equals(base)
    # a byte-order mark decides the encoding; UTF-16 (as Windows PowerShell 5.1 redirects
    # write) is read as it is and said in meta, without a fault
    for codec, name in (("utf-16", "utf-16-le"), ("utf-16-be", "utf-16-be")):
        raw = data.decode("cp1252").encode(codec)
        if codec == "utf-16-be":
            raw = b"\xfe\xff" + raw
        utf16 = R.read(raw, name="x.csv")
        assert utf16.value.equals(base) and utf16.meta["encoding"] == name
        assert not [f for f in utf16.faults if f.kind == "encoding"]


def test_utf16_without_bom_is_read_with_a_warning(fixture_bytes):
    base = R.read(fixture_bytes(DELL), name="x.csv").value
    r = R.read(fixture_bytes(DELL).decode("cp1252").encode("utf-16-le"), name="x.csv")
    assert r.value.equals(base) and r.meta["encoding"] == "utf-16-le"
    assert [(f.kind, f.line) for f in r.faults if f.kind == "encoding"] == [("encoding", 1)]


def test_truncated_mid_line(fixture_bytes, fault_kinds):
    data = fixture_bytes(DELL)
    lines = data.split(b"\n")
    cut = b"\n".join(lines[:29]) + b"\n" + lines[29][:700]
    r = R.read(cut, name="cut.csv")
    # lines 2-29 are whole; line 30 is cut; no footer
    assert sorted(set(r.value["line"])) == list(range(2, 30))
    assert ("error", "truncated", 30) in fault_kinds(r)
    assert any(f.kind == "truncated" and "footer" in f.message for f in r.faults)


def test_missing_footer_keeps_rows_without_devices(fixture_bytes):
    data = fixture_bytes(RYZEN)
    r = R.read(b"\n".join(data.split(b"\n")[:15]) + b"\n", name="x.csv")
    assert r.meta["footer"] is False and r.meta["samples"] == 14
    assert r.value["device"].null_count() == r.value.height
    assert r.value.filter(pl.col("source") == "Total Power [W] #1")["domain"][0] == "other"


def _rejoined(row: str) -> list[str]:
    cells: list[str] = []
    for c in row.split(","):
        if cells and (cells[-1].count("[") != cells[-1].count("]") or c.startswith(" ")):
            cells[-1] += "," + c
        else:
            cells.append(c)
    return cells


def test_shuffled_columns_give_the_same_readings(fixture_bytes):
    text = fixture_bytes(RYZEN).decode("utf-8")
    lines = text.split("\n")[:-1]
    header = next(csv.reader([lines[0]]))
    order = [
        0,
        1,
        *random.Random(7).sample(range(2, len(header) - 1), len(header) - 3),
        len(header) - 1,
    ]

    def shuffle(cells):
        return [cells[i] for i in order]

    # HWiNFO quotes the sensor names, not Date and Time
    head = 'Date,Time,"' + '","'.join(shuffle(header)[2:-1]) + '",'
    body = [",".join(shuffle(ln.split(","))) for ln in lines[1:15]]
    groups = ",".join(shuffle(_rejoined(lines[16])))
    shuffled = "\n".join([head, *body, head, groups]) + "\n"
    base = R.read(text.encode(), name="a.csv").value
    moved = R.read(shuffled.encode(), name="b.csv").value
    key = ["line", "source"]
    assert (
        moved.sort(key)
        .select(key, "watts", "device", "domain")
        .equals(base.sort(key).select(key, "watts", "device", "domain"))
    )


def test_time_going_back_repeats_and_bad_numbers(fixture_bytes, fault_kinds):
    lines = fixture_bytes(DELL).decode("cp1252").split("\n")
    lines[5], lines[6] = lines[6], lines[5]  # lines 6 and 7 swapped
    lines.insert(10, lines[9])  # line 11 repeats line 10
    cells = lines[20].split(",")
    cells[219] = "abc"  # CPU Package Power on line 21
    lines[20] = ",".join(cells)
    r = R.read("\n".join(lines).encode("cp1252"), name="x.csv")
    kinds = fault_kinds(r)
    assert ("warning", "order", 7) in kinds
    assert ("warning", "duplicate", 11) in kinds
    assert ("error", "type", 21) in kinds
    assert r.value.filter(pl.col("line") == 11).is_empty()
    assert r.value.filter(
        (pl.col("line") == 21) & (pl.col("source") == "CPU Package Power [W]")
    ).is_empty()
    assert r.value.filter(pl.col("line") == 21).height == 16


def test_not_a_hwinfo_header():
    r = R.read(b"a,b,c\n1,2,3\n", name="x.csv")
    assert r.value is None and r.errors[0].kind == "header" and r.errors[0].line == 1


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 1999),
            st.floats(0, 500, allow_nan=False),
            st.floats(0, 500, allow_nan=False),
        ),
        min_size=1,
        max_size=20,
    ),
    st.booleans(),
    st.booleans(),
)
def test_generated_logs(rows, footer, crlf):
    header = 'Date,Time,"CPU Package Power [W]","Total Power [W]","Total Power [W]",'
    body, ms = [], 0
    for step, a, b in rows:
        ms += step + 1
        s, m = divmod(ms, 1000)
        body.append(f"1.2.2025,9:{s // 60}:{s % 60}.{m},{a:.3f},{b:.3f},{a + b:.3f},")
    lines = [header, *body]
    if footer:
        lines += [header, ",,CPU [#0]: X,DDR5 DIMM [#1]: Y [A:, B:],DDR5 DIMM [#3]: Z,"]
    text = ("\r\n" if crlf else "\n").join(lines) + "\n"
    r = R.read(text.encode(), name="gen.csv", local_utc_offset="+00:00")
    f = r.value
    assert f.height == 3 * len(rows)
    pkg = f.filter(pl.col("source") == "CPU Package Power [W]")
    assert pkg["watts"].to_list() == pytest.approx([round(a, 3) for _, a, _ in rows])
    assert pkg["domain"][0] == "package"
    assert set(f["source"]) == {"CPU Package Power [W]", "Total Power [W] #1", "Total Power [W] #2"}
    if footer:
        assert dict(
            f.filter(pl.col("domain") == "dram")
            .group_by("source")
            .agg(pl.col("device").first())
            .iter_rows()
        ) == {"Total Power [W] #1": 1, "Total Power [W] #2": 3}
    assert not r.errors


def test_impossible_dates_and_non_numbers(fixture_bytes, fault_kinds):
    lines = fixture_bytes(DELL).decode("cp1252").split("\n")
    lines[2] = "31.2.2025" + lines[2][lines[2].index(",") :]  # line 3: no 31 February
    lines[3] = lines[3].replace("13.8.2025,13:58:5", "13.8.2025,25:58:5", 1)
    cells = lines[4].split(",")
    cells[219] = "nan"  # line 5: not a reading
    lines[4] = ",".join(cells)
    r = R.read("\n".join(lines).encode("cp1252"), name="x.csv")
    kinds = fault_kinds(r)
    assert ("error", "type", 3) in kinds and ("error", "type", 4) in kinds
    assert ("error", "type", 5) in kinds
    assert set(r.value["line"]) == set(range(2, 52)) - {3, 4}


def test_a_carriage_return_inside_the_header_is_a_fault(fixture_bytes, fault_kinds):
    """Found by test_readers_fuzz (a flipped byte): a lone CR in the header line, which the
    csv module refuses outside quotes, is a header fault naming line 1, not a traceback."""
    data = bytearray(fixture_bytes(DELL))
    data[818] = 13
    r = R.read(bytes(data), name="cr.csv")
    assert r.value is None
    assert ("error", "header", 1) in fault_kinds(r)
