"""nvidia-smi -q text and -q -x XML readers (snapshots), dmon, and the outputs that are
recognized and refused (default table, c2c); capture bundles."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.readers.power import (
    nvidia_smi_bundle,
    nvidia_smi_c2c,
    nvidia_smi_dmon,
    nvidia_smi_q,
    nvidia_smi_table,
    nvidia_smi_xml,
)

N = "nvidia-smi/"


def test_xml_v12_trimmed_a100(fixture_bytes, well_formed, fault_kinds):
    r = nvidia_smi_xml.read(
        fixture_bytes(N + "telegraf_q-x_a100-sxm4-v12.xml"), name="a.xml", local_utc_offset="+00:00"
    )
    well_formed(r, "a.xml", "power")
    # <gpu_power_readings><power_draw>67.03 W</power_draw> at line 310; the module reading is N/A
    assert r.value.select("domain", "device", "watts", "source", "line").rows() == [
        ("gpu", 0, 67.03, "gpu_power_readings/power_draw", 310)
    ]
    assert r.value["end"][0] == datetime(2023, 8, 4, 11, 44, 30, tzinfo=UTC)
    assert r.meta["dtd"] == "v12" and r.meta["devices"][0]["name"] == "NVIDIA A100-SXM4-80GB"
    # <attached_gpus>4</attached_gpus> but one <gpu> element
    assert ("warning", "truncated", 4) in fault_kinds(r)
    assert ("warning", "coverage", None) in fault_kinds(r)


def test_xml_v13_average_and_instant(fixture_bytes):
    r = nvidia_smi_xml.read(
        fixture_bytes(N + "telegraf_q-x_rtx-4000-sff-ada-v13.xml"), name="r.xml"
    )
    assert r.value.select("watts", "source", "line").rows() == [
        (8.81, "gpu_power_readings/average_power_draw", 241),
        (8.44, "gpu_power_readings/instant_power_draw", 242),
    ]
    assert r.meta["dtd"] == "v13"


def test_xml_stream_cut_and_entities(fixture_bytes, fault_kinds):
    doc = fixture_bytes(N + "telegraf_q-x_rtx-4000-sff-ada-v13.xml")
    two = doc + doc.replace(b"01:03:40", b"01:03:41")
    r = nvidia_smi_xml.read(two, name="s.xml", local_utc_offset="+00:00")
    assert r.value.height == 4 and r.value["interval_s"].drop_nulls().to_list() == [1.0, 1.0]
    assert not [f for f in r.faults if f.kind == "coverage"]
    cut = nvidia_smi_xml.read(doc[: doc.index(b"</gpu_power_readings>") + 5], name="c.xml")
    assert cut.value.height == 2 and any(f.kind == "syntax" for f in cut.errors)
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE n [<!ENTITY a "x"><!ENTITY b "&a;&a;">]>'
        b"<nvidia_smi_log>&b;</nvidia_smi_log>"
    )
    r = nvidia_smi_xml.read(bomb, name="b.xml")
    assert r.value is None and ("error", "limit", 1) in fault_kinds(r)


@pytest.mark.parametrize(
    ("name", "expected", "when"),
    [
        (
            "q_load_h100-80gb_590.48.01.txt",
            [
                (629.45, "GPU Power Readings/Average Power Draw", 194, "gpu"),
                (588.39, "GPU Power Readings/Instantaneous Power Draw", 195, "gpu"),
                (85.83, "GPU Memory Power Readings/Average Power Draw", 202, "gpu_memory"),
            ],
            (2026, 7, 14, 8, 12, 53),
        ),
        (
            "q_load_l40s_595.80.txt",
            [
                (110.24, "GPU Power Readings/Average Power Draw", 196, "gpu"),
                (110.01, "GPU Power Readings/Instantaneous Power Draw", 197, "gpu"),
            ],
            (2026, 7, 3, 8, 33, 53),
        ),
        (
            "q_load_rtx4080super_595.71.05.txt",
            [
                (84.03, "GPU Power Readings/Average Power Draw", 184, "gpu"),
                (86.41, "GPU Power Readings/Instantaneous Power Draw", 185, "gpu"),
            ],
            (2026, 6, 26, 11, 59, 58),
        ),
    ],
)
def test_q_text(fixture_bytes, well_formed, name, expected, when):
    r = nvidia_smi_q.read(fixture_bytes(N + name), name=name, local_utc_offset="+00:00")
    well_formed(r, name, "power")
    assert r.value.select("watts", "source", "line", "domain").rows() == expected
    assert set(r.value["end"]) == {datetime(*when, tzinfo=UTC)}
    assert set(r.value["device"]) == {0}


def test_q_text_two_reports(fixture_bytes):
    doc = fixture_bytes(N + "q_load_l40s_595.80.txt")
    r = nvidia_smi_q.read(doc + doc.replace(b"08:33:53", b"08:33:54"), name="two.txt")
    assert r.meta["snapshots"] == 2 and r.value.height == 4
    assert r.value.sort("line")["interval_s"].to_list() == [None, None, 1.0, 1.0]


@pytest.mark.parametrize(
    ("name", "watts"),
    [
        ("dmon_load_h100-80gb_590.48.01.txt", [631, 634, 633, 634, 636]),
        ("dmon_load_h100-mig_590.48.01.txt", [438, 440, 437, 439, 439]),
        ("dmon_load_rtx4080super_595.71.05.txt", [83, 84, 84, 84, 84]),
        ("dmon_load_win_rtx2080super_591.86.txt", [97, 97, 97, 97, 97]),
    ],
)
def test_dmon_has_no_times(fixture_bytes, well_formed, name, watts):
    r = nvidia_smi_dmon.read(fixture_bytes(N + name), name=name)
    well_formed(r, name, "power")
    assert r.value["watts"].to_list() == watts and r.value["line"].to_list() == [3, 4, 5, 6, 7]
    assert r.value["end"].null_count() == 5 and r.meta["timestamps"] is False
    assert [f.kind for f in r.faults] == ["coverage"]


def test_dmon_with_date_and_time_and_a_cut_row():
    text = (
        "# Date       Time        gpu    pwr  gtemp\n"
        "# YYYYMMDD   HH:MM:SS    Idx      W      C\n"
        " 20250102   03:04:05      0    100     50\n 20250102   03:04:06      0      -     50\n"
        " 20250102   03:04:07      0    102     50\n 20250102   03:04:0"
    )
    r = nvidia_smi_dmon.read(text.encode(), name="d.txt", local_utc_offset="+01:00")
    assert r.meta["timestamps"] is True
    assert r.value["watts"].to_list() == [100, 102]
    assert r.value["end"].to_list() == [
        datetime(2025, 1, 2, 2, 4, 5, tzinfo=UTC),
        datetime(2025, 1, 2, 2, 4, 7, tzinfo=UTC),
    ]
    assert r.value["interval_s"].to_list() == [None, 2.0]
    assert any(f.kind == "truncated" and f.line == 6 for f in r.errors)


@pytest.mark.parametrize(
    ("name", "watts", "cap"),
    [
        ("default-table_load_h100-mig_590.48.01.txt", 432, 700),
        ("default-table_load_rtx4080super_595.71.05.txt", 83, 320),
    ],
)
def test_default_table_is_refused(fixture_bytes, name, watts, cap):
    r = nvidia_smi_table.read(fixture_bytes(N + name), name=name)
    assert r.value is None
    assert r.errors[0].kind == "format" and "not a power log" in r.errors[0].message
    assert [(x["watts"], x["cap_w"], x["line"]) for x in r.meta["readings"]] == [(watts, cap, 10)]


def test_c2c_is_not_power_evidence(fixture_bytes):
    r = nvidia_smi_c2c.read(
        fixture_bytes(N + "VirtualClient_query-c2c-multiple-gpu.txt"), name="c.txt"
    )
    assert r.value is None and "not power evidence" in r.errors[0].message
    assert r.meta["gpus"] == [{"gpu": g, "links": 5} for g in range(4)]


def test_linux_capture_bundle(fixture_bytes, well_formed):
    name = "nvidia_gpu_exporter_capture__linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt"
    r = nvidia_smi_bundle.read(fixture_bytes(N + name), name=name, local_utc_offset="+00:00")
    well_formed(r, name, "power")
    assert len(r.meta["sections"]) == 27
    read = {s["title"]: s["read"] for s in r.meta["sections"]}
    assert read["load :: query (-q)"] == "nvidia-smi-q: 3 readings"
    assert read["load :: dmon (per-device monitor, incl. PCIe rx/tx)"].startswith("dmon")
    f = r.value
    # idle -q (lines 1672, 1673, 1680), idle csv (1741), load -q (2018, 2019, 2026), load csv
    # (2105): the lines point into the bundle
    assert sorted(set(f["line"])) == [1672, 1673, 1680, 1741, 2018, 2019, 2026, 2105]
    assert f.filter(pl.col("line") == 2105).sort("source")["watts"].to_list() == [
        631.95,
        631.95,
        625.68,
    ]
    assert f.filter(pl.col("line") == 2018)["watts"].item() == 629.45
    assert any(x.kind == "format" and "bundle" in x.message for x in r.faults)
    assert all(x.line is None or x.line >= 1672 or x.line == 1 for x in r.faults)


def test_windows_capture_bundle(fixture_bytes):
    name = "nvidia_gpu_exporter_capture__windows-x86_64__nvidia-geforce-rtx-2080-super__591.86.txt"
    r = nvidia_smi_bundle.read(fixture_bytes(N + name), name=name)
    assert len(r.meta["sections"]) == 26
    # -q: only Instantaneous Power Draw (1592 idle, 2040 load); csv: power.draw and instant
    assert sorted(set(r.value["line"])) == [1592, 1720, 2040, 2180]
    assert r.value.filter(pl.col("line") == 2040)["watts"].item() == 97.49


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(0, 2000, allow_nan=False)), min_size=1, max_size=6))
def test_generated_q_reports(values):
    text = "".join(
        "\n==============NVSMI LOG==============\n\n"
        f"Timestamp                                 : Tue Jul 14 08:12:{i:02d} 2026\n"
        "Attached GPUs                             : 1\nGPU 00000000:01:00.0\n"
        "    Product Name                          : X\n    GPU Power Readings\n"
        f"        Instantaneous Power Draw          : {'N/A' if v is None else f'{v:.2f} W'}\n"
        "        Current Power Limit               : 350.00 W\n"
        for i, v in enumerate(values)
    )
    r = nvidia_smi_q.read(text.encode(), name="g.txt", local_utc_offset="+00:00")
    expected = [round(v, 2) for v in values if v is not None]
    if not expected:
        assert r.value is None
    else:
        assert r.value["watts"].to_list() == pytest.approx(expected)
        assert set(r.value["source"]) == {"GPU Power Readings/Instantaneous Power Draw"}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(0, 999))),
        min_size=1,
        max_size=20,
    )
)
def test_generated_dmon(rows):
    text = "# gpu    pwr  gtemp\n# Idx      W      C\n" + "".join(
        f"    {g}    {'-' if w is None else w}     50\n" for g, w in rows
    )
    r = nvidia_smi_dmon.read(text.encode(), name="g.txt")
    expected = [(g, float(w)) for g, w in rows if w is not None]
    if not expected:
        assert r.value is None
    else:
        assert list(zip(r.value["device"], r.value["watts"], strict=True)) == expected


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.none(), st.floats(0, 2000, allow_nan=False)), min_size=1, max_size=3),
        min_size=1,
        max_size=3,
    )
)
def test_generated_xml_reports(reports):
    def gpu(v):
        draw = "N/A" if v is None else f"{v:.2f} W"
        return (
            f'<gpu id="0"><product_name>X</product_name><gpu_power_readings>'
            f"<instant_power_draw>{draw}</instant_power_draw>"
            "<current_power_limit>70.00 W</current_power_limit></gpu_power_readings></gpu>"
        )

    docs = "".join(
        f'<?xml version="1.0" ?>\n<nvidia_smi_log>\n<timestamp>Thu Aug  6 01:03:{i:02d} 2026'
        f"</timestamp>\n<attached_gpus>{len(gpus)}</attached_gpus>\n"
        + "\n".join(gpu(v) for v in gpus)
        + "\n</nvidia_smi_log>\n"
        for i, gpus in enumerate(reports)
    )
    r = nvidia_smi_xml.read(docs.encode(), name="g.xml", local_utc_offset="+00:00")
    expected = [(d, round(v, 2)) for gpus in reports for d, v in enumerate(gpus) if v is not None]
    if not expected:
        assert r.value is None
    else:
        got = list(zip(r.value["device"], r.value["watts"], strict=True))
        assert got == [(d, pytest.approx(v)) for d, v in expected]
