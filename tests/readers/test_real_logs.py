"""Issue 22: the real logs users have, read right. Every file added for the issue (SOURCES.md,
"Added for issue 22") is read through `audit evidence`'s core, and its figures are compared
with figures read off the file's bytes by hand (the comment above each says where): sample
count, first and last time, median interval, mean and peak of the main channel, energy
where the tool gives one, placement shares. Files in `synthetic/` are NOT tool outputs
(SOURCES.md says how each was made); the tests that use them say so."""

from __future__ import annotations

import itertools
import statistics
from pathlib import Path

import polars as pl
import pytest

from auditor.evidence import summarise
from auditor.readers import evidence_kinds
from auditor.readers.power import powermetrics_plist, powermetrics_text

FIXTURES = Path(__file__).parent / "fixtures"


def load(rel: str) -> bytes:
    return (FIXTURES / rel).read_bytes()


def power(rel: str, offset: str | None = "+00:00"):
    s = summarise(load(rel), rel, local_utc_offset=offset)
    assert s.usable, s.reason
    return s


def channel(s, source: str, device: int | None = None) -> dict:
    return next(d for d in s.power.domains if d["source"] == source and d["device"] == device)


# --- class 1: powermetrics text sampled faster than once a second -----------------------

CODECARBON = "powermetrics/text/codecarbon_powermetrics_log_macbookair10-1_i100.txt"


def test_i100_log_is_ten_samples_dated_by_their_intervals():
    s = power(CODECARBON)
    # 10 headers (lines 8, 60, ..., 476): 7 read 12:37:08 +0100, 3 read 12:37:09, with
    # 104.51, 104.81, 105.93, 108.22, 109.24, 108.45, 108.38, 106.72, 108.88, 108.92 ms.
    # The samples end at A + the elapsed sums; the 8th header (09) needs A + 0.85626 s >=
    # 09, the 7th (08) A + 0.74954 < 09: A = 08.14374, the first end 08.14374 + 0.10451.
    assert s.power.samples == 10 and s.meta["samples"] == 10
    assert s.power.start == "2023-11-10T11:37:08.143740Z"  # first end - 104.51 ms
    assert s.power.end == "2023-11-10T11:37:09.217800Z"  # 08.14374 + 1.07406 s
    assert s.power.median_interval_s == pytest.approx(0.1083)  # (108.22 + 108.38) / 2
    assert s.meta["time_runs"] == 1
    # the anchor may lie anywhere in [08.14374, 08.25046): 0.10672 s of uncertainty
    assert s.meta["time_uncertainty_s"] == pytest.approx(0.10672)
    # Package Power (no Combined line on Monterey): 1473, 773, 396, 120, 284, 618, 434, 450,
    # 303, 321 mW; energy = sum of mW x ms = 550.95718 mJ
    pkg = channel(s, "Package Power")
    assert pkg["domain"] == "package" and pkg["readings"] == 10
    assert pkg["mean_w"] == pytest.approx(0.5172) and pkg["max_w"] == pytest.approx(1.473)
    assert pkg["energy_j"] == pytest.approx(0.55095718)
    assert channel(s, "CPU Power")["max_w"] == pytest.approx(0.947)
    # no sample repeats the time of the previous one any more
    assert not [f for f in s.faults if f.kind in ("repeat", "order")]


def test_i100_times_strictly_increase_and_intervals_tile():
    r = powermetrics_text.read(load(CODECARBON), name="cc.txt")
    cpu = r.value.filter(pl.col("source") == "CPU Power").sort("line")
    ends = cpu["end"].to_list()
    assert all(b > a for a, b in itertools.pairwise(ends))
    # within a run, each sample starts where the previous ended (to the microsecond)
    starts = cpu["start"].to_list()
    assert all(abs((s - e).total_seconds()) < 2e-6 for e, s in zip(ends, starts[1:], strict=False))
    # every end, cut to the second, is its header's second
    heads = [8] * 7 + [9] * 3
    assert [e.second for e in ends] == heads


def test_local_time_header_needs_no_offset_but_abbreviations_do():
    # the header gives +0100: the file's times are absolute, the option changes nothing
    a = power(CODECARBON, offset=None)
    b = power(CODECARBON, offset="+05:00")
    assert a.power.end == b.power.end == "2023-11-10T11:37:09.217800Z"
    assert not [f for f in a.faults if f.kind == "timezone"]


BIGSUR = "powermetrics/text/singhkays_GB5-Compute-Metal_macmini9-1_head20.txt"


def test_big_sur_clusters_total_power_is_the_cpu():
    s = power(BIGSUR)
    # 20 headers 00:17:04 ... 00:17:23 -0800, one a second, 1005.03 ... 1014.99 ms elapsed
    # (median 1013.91); the first end is its header, the last 04 + 20.26931 - 1.00503 s
    assert s.power.samples == 20
    assert s.power.start == "2021-02-28T08:17:02.994970Z"
    assert s.power.end == "2021-02-28T08:17:23.264280Z"
    assert s.power.median_interval_s == pytest.approx(1.01391)
    cpu = channel(s, "Clusters Total Power")
    assert cpu["domain"] == "cpu"  # E + P clusters: 11 + 12 = 23 mW in the first sample
    pkg = channel(s, "Package Power")
    # Package Power: mean 17.0 mW, peak 99 mW, energy 344.36135 mJ (sum mW x ms)
    assert pkg["mean_w"] == pytest.approx(0.017) and pkg["max_w"] == pytest.approx(0.099)
    assert pkg["energy_j"] == pytest.approx(0.34436135)
    # GPU Power printed twice per sample (processor and GPU sections): one row each sample
    assert channel(s, "GPU Power")["readings"] == 20


def test_intel_text_package_holds_cpu_and_integrated_gpu():
    r = powermetrics_text.read(
        load("powermetrics/text/power-server_sonoma-intel.txt"), name="intel.txt"
    )
    assert r.value["includes"].to_list() == ["cpu,gpu"]
    r = powermetrics_text.read(load(BIGSUR), name="m1.txt")
    pkg = r.value.filter(pl.col("domain") == "package")
    assert set(pkg["includes"]) == {"ane,cpu,gpu"}


def test_text_cut_mid_line_and_crlf():
    data = load(CODECARBON)
    cut = data[: data.index(b"DRAM Power: 83 mW")]  # inside the 7th sample (line 420)
    r = powermetrics_text.read(cut + b"DRAM Pow", name="cut.txt")
    assert r.meta["samples"] == 7
    assert any(f.kind == "truncated" and "line end" in f.message for f in r.faults)
    assert any(f.kind == "truncated" and "fewer power lines" in f.message for f in r.faults)
    base = powermetrics_text.read(data, name="x.txt").value
    crlf = powermetrics_text.read(data.replace(b"\n", b"\r\n"), name="x.txt").value
    assert crlf.equals(base)


# --- class 2: powermetrics plist, Intel and GPU-only streams -----------------------------


def test_intel_plist_package_watts_and_joules():
    s = power("powermetrics/plist/catapult_powermetrics_output_macbookpro11-3.plist")
    # <date>2014-06-13T17:07:20Z</date>, elapsed_ns 4295788088, package_watts 3.03713,
    # package_joules 13.0469 (= 3.03713 W x 4.295788 s: energy per sample, is_delta false)
    pkg = channel(s, "processor.package_watts")
    assert pkg["domain"] == "package" and pkg["mean_w"] == pytest.approx(3.03713)
    assert pkg["energy_j"] == pytest.approx(13.0469)
    assert s.power.end == "2014-06-13T17:07:20Z"
    assert s.power.start == "2014-06-13T17:07:15.704212Z"
    assert s.meta["units"] == ["J", "W"] and s.meta["hw_model"] == "MacBookPro11,3"
    assert s.meta["energy_vs_power_max_rel_diff"] < 1e-5
    r = powermetrics_plist.read(
        load("powermetrics/plist/catapult_powermetrics_output_macbookpro11-3.plist"), name="i"
    )
    assert r.value["includes"].to_list() == ["cpu,gpu"]
    assert r.value["kind"].to_list() == ["interval"]


def test_intel_plist_stream():
    s = power("powermetrics/plist/catapult_powermetrics_stream_macbookpro10-1_head2.plist")
    # documents at lines 1 and 3259: 23:14:36Z, 5004803923 ns, 5.49528 W, 27.5028 J;
    # 23:14:41Z, 5006501905 ns, 5.03607 W, 25.2131 J
    pkg = channel(s, "processor.package_watts")
    assert s.power.samples == 2 and s.meta["documents"] == 2
    assert pkg["mean_w"] == pytest.approx((5.49528 + 5.03607) / 2)
    assert pkg["max_w"] == pytest.approx(5.49528)
    assert pkg["energy_j"] == pytest.approx(27.5028 + 25.2131)
    assert s.power.start == "2014-01-21T23:14:30.995196Z"
    assert s.power.end == "2014-01-21T23:14:41Z"
    assert s.power.median_interval_s == pytest.approx((5.004803923 + 5.006501905) / 2)


GPU_STREAM = "powermetrics/plist/matiasinsaurralde_gpu_power_multiple_samples.plist"


def test_gpu_power_sampler_stream_is_read_from_gpu_energy():
    s = power(GPU_STREAM)
    # 5 NUL-separated documents: 05:15:15, :21, :26, :31, :36 Z; elapsed_ns 5004758375,
    # 5014447083, 5010073541, 5014230916, 5009178500; gpu.gpu_energy 19, 107, 788, 146,
    # 126 mJ
    energies = [19, 107, 788, 146, 126]
    ns = [5004758375, 5014447083, 5010073541, 5014230916, 5009178500]
    watts = [e / 1000 / (n / 1e9) for e, n in zip(energies, ns, strict=True)]
    gpu = channel(s, "gpu.gpu_energy")
    assert gpu["domain"] == "gpu" and gpu["readings"] == 5
    assert gpu["energy_j"] == pytest.approx(1.186)
    assert gpu["mean_w"] == pytest.approx(statistics.mean(watts))
    assert gpu["max_w"] == pytest.approx(0.788 / 5.010073541)
    assert s.power.samples == 5 and s.power.end == "2025-07-06T05:15:36Z"
    assert s.power.median_interval_s == pytest.approx(5.010073541)
    assert s.meta["gpu_energy_field"] == "gpu.gpu_energy"
    one = power("powermetrics/plist/matiasinsaurralde_gpu_power.plist")
    assert channel(one, "gpu.gpu_energy")["energy_j"] == pytest.approx(0.009)


def test_plists_without_power_say_why():
    vm = summarise(load("powermetrics/plist/catapult_powermetrics_vmware.plist"), "vm.plist")
    assert not vm.usable
    assert "VMware7,1" in vm.reason and "virtual machine" in vm.reason
    old = summarise(
        load("powermetrics/plist/catapult_powermetrics_unsupported_hardware.plist"), "old.plist"
    )
    assert not old.usable and "MacBookPro5,4" in old.reason
    assert "--samplers cpu_power,gpu_power" in old.reason


def test_plist_stream_cut_mid_document_keeps_the_whole_ones():
    data = load(GPU_STREAM)
    cut = data[: data.index(b"<key>gpu_energy</key><integer>146")]
    r = powermetrics_plist.read(cut, name="cut.plist")
    assert r.meta["samples"] == 3 and r.meta["documents"] == 4
    assert any(f.kind == "syntax" for f in r.errors)


# --- class 3: HWiNFO encodings, other languages, DRAM, older footers ----------------------

RYZEN = "hwinfo/hwInfoAnalyzer_test_Ryzen9950X3D.csv"
DELL = "hwinfo/hwinfo-tui_sensors_DellPrecision5570_head50.csv"


def _totals(frame: pl.DataFrame) -> pl.DataFrame:
    return (
        frame.filter(pl.col("domain").is_in(["package", "ppt", "gpu", "dram"]))
        .select("domain", "device", "watts", "line")
        .sort("domain", "device", "line")
    )


def hwinfo(data: bytes, **kw):
    return evidence_kinds.read(data, "x.csv", local_utc_offset="+02:00", **kw)[1]


def test_hwinfo_utf8_with_a_byte_order_mark():
    """DERIVED from the real logs: no HWiNFO log saved with a mark was found."""
    base = hwinfo(load(RYZEN))
    marked = hwinfo(b"\xef\xbb\xbf" + load(RYZEN))
    assert marked.meta["encoding"] == "utf-8-sig" and marked.value.equals(base.value)
    dell = load(DELL).decode("cp1252")
    as_utf8 = hwinfo(b"\xef\xbb\xbf" + dell.encode("utf-8"))
    assert as_utf8.meta["encoding"] == "utf-8-sig"
    assert "CPU Package Power [W]" in set(as_utf8.value["source"])
    # a marked file holding a stray cp1252 byte stays UTF-8: names are never garbled
    stray = b"\xef\xbb\xbf" + dell.encode("utf-8").replace(b"Enhanced", b"Enhanced\xb0", 1)
    r = hwinfo(stray)
    assert r.meta["encoding"] == "utf-8-sig+replace"
    assert [f.kind for f in r.faults if f.kind == "encoding"] == ["encoding"]
    assert _totals(r.value).equals(_totals(as_utf8.value))


def test_hwinfo_names_recognised_by_unit_and_sensor_group():
    """Every English word of every [W] column reversed (acronyms such as PPT kept): the
    package, PPT, GPU boards and DIMMs are still found, from the unit and the groups."""
    for rel, enc in ((RYZEN, "utf-8"), (DELL, "cp1252")):
        text = load(rel).decode(enc)
        lines = text.split("\n")
        end = lines.index(lines[0], 1)

        def garble(cell: str) -> str:
            if not (cell.startswith('"') and cell.endswith(' [W]"')):
                return cell
            words = cell[1:-5].split(" ")
            return (
                '"'
                + " ".join(w[::-1] if w.isalpha() and not w.isupper() else w for w in words)
                + ' [W]"'
            )

        head = ",".join(garble(c) for c in lines[0].split(","))
        foreign = "\n".join([head, *lines[1:end], head, *lines[end + 1 :]])
        a, b = hwinfo(load(rel)), hwinfo(foreign.encode(enc))
        assert _totals(b.value).equals(_totals(a.value)), rel
        assert b.meta["semantic_columns"]


def test_hwinfo_german_names():
    """SYNTHETIC file: the Ryzen log under the German names HWiNFO64 writes (SOURCES.md)."""
    de = hwinfo(load("synthetic/hwinfo_german-power-names_from-Ryzen9950X3D.csv"))
    assert de.meta["semantic_columns"] == {
        "CPU-Gesamt-Leistungsaufnahme [W]": "package",
        "Gesamtleistung [W] #1": "dram",
        "Gesamtleistung [W] #2": "dram",
        "GPU ASIC Leistung [W]": "gpu",
        "GPU Leistung [W]": "gpu",
    }
    assert _totals(de.value).equals(_totals(hwinfo(load(RYZEN)).value))


def test_hwinfo_chinese_names_with_and_without_footer():
    """SYNTHETIC file: the Ryzen log under Simplified Chinese power names, in GBK as HWiNFO
    writes it on Chinese Windows (SOURCES.md): the package and the GPU boards are found by
    name, footer or not, and read the same watts as the English log; UTF-8 reads alike."""
    data = load("synthetic/hwinfo_chinese-power-names_from-Ryzen9950X3D.csv")
    english = _totals(hwinfo(load(RYZEN)).value)
    without_footer = b"\n".join(data.split(b"\n")[:15]) + b"\n"
    for variant in (data, without_footer, data.decode("gbk").encode("utf-8")):
        r = hwinfo(variant)
        assert r.meta["encoding"] in ("gbk", "utf-8")
        by_name = dict(r.value.select("source", "domain").unique().iter_rows())
        assert by_name["CPU 封装功率 [W]"] == "package"
        assert by_name["GPU 功率 [W]"] == by_name["GPU ASIC 功率 [W]"] == "gpu"
        assert not [f for f in r.faults if f.kind == "header"]
    assert _totals(hwinfo(data).value).equals(english)
    # the German log is never read as GBK
    de = hwinfo(load("synthetic/hwinfo_german-power-names_from-Ryzen9950X3D.csv"))
    assert de.meta["encoding"] != "gbk"


def test_hwinfo_unknown_names_without_footer_are_said():
    text = load("synthetic/hwinfo_german-power-names_from-Ryzen9950X3D.csv").decode("cp1252")
    r = hwinfo("\n".join(text.split("\n")[:15]).encode("cp1252") + b"\n")
    assert r.meta["footer"] is False
    assert any(f.kind == "header" and "another language" in f.message for f in r.faults)
    assert set(r.value.filter(pl.col("domain") != "other")["domain"]) == {"ppt"}
    # an English log without its footer knows every name: no such warning
    english = hwinfo(b"\n".join(load(RYZEN).split(b"\n")[:15]) + b"\n")
    assert not [f for f in english.faults if f.kind == "header"]


def test_hwinfo_total_dram_power_and_header_only_footer():
    """DERIVED: the Dell log with its IA Cores column renamed to Intel's RAPL DRAM reading,
    and with its sensor-group row dropped (older HWiNFO footers)."""
    text = load(DELL).decode("cp1252")
    lines = text.split("\n")[:-1]
    renamed = (
        "\n".join(ln.replace('"IA Cores Power [W]"', '"Total DRAM Power [W]"') for ln in lines)
        + "\n"
    )
    r = hwinfo(renamed.encode("cp1252"))
    dram = r.value.filter(pl.col("source") == "Total DRAM Power [W]")
    assert set(dram["domain"]) == {"dram"} and set(dram["includes"]) == {""}
    header_only = "\n".join(lines[:-1]) + "\n"
    r = hwinfo(header_only.encode("cp1252"))
    assert r.meta["footer"] == "header only" and r.meta["samples"] == 50
    assert not [f for f in r.faults if f.kind == "truncated"]


def test_hwinfo_local_time_with_offset():
    # 14.8.2025 22:30:47.672 local: with +02:00 it is 20:30:47.672Z
    s = summarise(load(RYZEN), "r.csv", local_utc_offset="+02:00")
    assert s.power.start == "2025-08-14T20:30:47.672000Z"
    assert s.meta["local_utc_offset"] == "+02:00"
    assert not [f for f in s.faults if f.kind == "timezone"]


# --- class 4: nvidia-smi CSV from a PowerShell 5.1 redirect, several drivers -------------


def test_nvidia_smi_csv_utf16_from_powershell():
    """DERIVED: the real 8xH100 log as PowerShell 5.1 `>` writes it (UTF-16 LE, a mark,
    CRLF); no such capture was found."""
    raw = load("nvidia-smi/VirtualClient_query-gpu-8xH100.csv")
    ps = b"\xff\xfe" + raw.decode().replace("\n", "\r\n").encode("utf-16-le")
    a = summarise(raw, "a.csv", local_utc_offset="+00:00")
    b = summarise(ps, "b.csv", local_utc_offset="+00:00")
    assert b.reader == "nvidia-smi-csv" and b.meta["encoding"] == "utf-16-le"
    assert b.power == a.power


@pytest.mark.parametrize(
    ("rel", "instant", "average", "stamp"),
    [
        # the load :: query-gpu rows: power.draw.instant, power.draw.average, timestamp
        (
            "nvidia-smi/query-gpu_all-fields_load_h200_590.48.01.csv",
            626.26,
            627.40,
            "2026-07-03T22:11:09.763000Z",
        ),
        (
            "nvidia-smi/query-gpu_all-fields_load_rtx2080super_610.57.04.csv",
            98.14,
            None,
            "2026-08-12T21:54:00.311000Z",
        ),
        (
            "nvidia-smi/query-gpu_all-fields_load_win_rtx2080super_610.62.csv",
            97.99,
            None,
            "2026-06-24T10:17:56.770000Z",
        ),
    ],
)
def test_query_gpu_csv_drivers(rel, instant, average, stamp):
    s = power(rel)
    assert channel(s, "power.draw.instant [W]", 0)["mean_w"] == pytest.approx(instant)
    if average is None:  # Turing: [N/A]
        assert not [d for d in s.power.domains if d["source"] == "power.draw.average [W]"]
        assert "power.draw.average [W]" in s.meta["unavailable_fields"]
    else:
        assert channel(s, "power.draw.average [W]", 0)["mean_w"] == pytest.approx(average)
    assert s.power.end == stamp and s.power.samples == 1
    assert any(f.kind == "coverage" for f in s.faults)


def test_query_gpu_csv_local_time_and_cut_line():
    rel = "nvidia-smi/VirtualClient_query-gpu-8xH100.csv"
    s = summarise(load(rel), "vc.csv", local_utc_offset="-07:00")
    assert s.power.end == "2024-03-15T20:57:59.861000Z"  # 13:57:59.861 at -07:00
    data = load(rel)
    cut = data[: data.rindex(b"\n") + 40]  # the last row cut 40 bytes in
    r = evidence_kinds.read(cut, "cut.csv", local_utc_offset="+00:00")[1]
    assert any(f.kind == "truncated" and f.line == 9 for f in r.errors)  # 9 lines, no end
    assert r.value is not None


# --- nvidia-smi -q -x from more drivers, multi-GPU, N/A --------------------------------


def test_xml_two_gpus_v13():
    s = power("nvidia-smi/telegraf_q-x_dual-rtx-2080-v13.xml")
    # <timestamp>Tue Dec 30 09:49:44 2025</timestamp>; GPU 00000000:01:00.0 instant 1.00 W,
    # GPU 00000000:02:00.0 instant 1.62 W; average_power_draw N/A on both (Turing)
    assert channel(s, "gpu_power_readings/instant_power_draw", 0)["mean_w"] == 1.0
    assert channel(s, "gpu_power_readings/instant_power_draw", 1)["mean_w"] == 1.62
    assert s.power.devices == (0, 1) and s.power.end == "2025-12-30T09:49:44Z"
    assert s.meta["dtd"] == "v13" and len(s.meta["devices"]) == 2


def test_xml_v11_and_missing_power():
    s = power("nvidia-smi/telegraf_q-x_tesla-t4-v11.xml")
    assert channel(s, "power_readings/power_draw", 0)["mean_w"] == 26.78
    assert s.power.end == "2023-04-24T16:22:39Z"
    na = summarise(load("nvidia-smi/telegraf_q-x_gt-1030-v11.xml"), "gt.xml")
    assert not na.usable
    assert "power_readings/power_draw N/A" in na.reason and "GT 1030" in na.reason
    trimmed = summarise(load("nvidia-smi/telegraf_q-x_gtx-1070-ti-v10.xml"), "gtx.xml")
    assert not trimmed.usable
    assert any("GTX 1070 Ti" in f.message and f.kind == "empty" for f in trimmed.faults)


def test_xml_without_a_timestamp_says_it_has_none():
    """REAL file (the GTX 1070 Ti report, trimmed of its <timestamp> by whoever shared it)
    and the T4 report with its <timestamp> taken out (DERIVED): `meta` says there are no
    timestamps and a `coverage` warning says the readings cannot show their window, as for
    dmon without times; no error about an unreadable time."""
    import re

    from auditor.readers.power import nvidia_smi_xml

    gtx = nvidia_smi_xml.read(load("nvidia-smi/telegraf_q-x_gtx-1070-ti-v10.xml"), name="g")
    t4 = re.sub(
        rb"<timestamp>[^<]*</timestamp>\s*", b"", load("nvidia-smi/telegraf_q-x_tesla-t4-v11.xml")
    )
    timeless = nvidia_smi_xml.read(t4, name="t")
    for r in (gtx, timeless):
        assert r.meta["timestamps"] is False
        assert [f.kind for f in r.faults if f.kind in ("coverage", "type")] == ["coverage"]
    assert timeless.value is not None and timeless.value["end"].null_count() == 1
    assert summarise(t4, "t.xml").usable


# --- class 5: dmon with and without power -----------------------------------------------


@pytest.mark.parametrize(
    ("rel", "values"),
    [
        ("nvidia-smi/dmon_load_h200_590.48.01.txt", [630, 628, 629, 632, 630]),
        ("nvidia-smi/dmon_load_win_rtx2080super_610.62.txt", [97, 97, 97, 98, 97]),
    ],
)
def test_dmon_with_power(rel, values):
    s = power(rel)
    pwr = channel(s, "pwr", 0)
    assert pwr["readings"] == 5 and pwr["mean_w"] == pytest.approx(statistics.mean(values))
    assert pwr["max_w"] == max(values) and s.power.timestamps is False


def test_dmon_without_power_says_use_s_p():
    """SYNTHETIC file (dmon -s u layout; SOURCES.md)."""
    s = summarise(load("synthetic/nvidia-smi_dmon_-s_u_no-power.txt"), "dmon.txt")
    assert s.reader == "nvidia-smi-dmon" and not s.usable
    assert "dmon log without power" in s.reason and "-s p" in s.reason


# --- class 6: ORT memory copies apart from the compute share ----------------------------


def test_ort_memcpy_nodes_are_counted_apart():
    """SYNTHETIC profile of a CUDA session (SOURCES.md): 8 nodes, 2 of them copies."""
    s = summarise(load("synthetic/onnxruntime-profile_cuda-with-memcpy.json"), "p.json")
    p = s.placement
    # compute: Gather, ReduceMean, Gemm, Softmax on CUDA; Shape, Gather_1 on CPU
    assert (p["nodes"], p["transfers"], p["ops_with_placement"]) == (8, 2, 6)
    assert p["operation_share"] == pytest.approx(4 / 6)
    assert p["cpu_node_share"] == pytest.approx(2 / 6)
    # kernel us over both runs: CUDA compute 230 + 118 + 390 + 59, CPU 5 + 4, copies 78 + 49
    assert p["cost_share"] == pytest.approx(797 / 806)
    assert p["transfer_cost"] == 127 and p["transfers_by_device"] == {"gpu": 2}
    assert s.meta["transfer_nodes"] == 2


def test_evidence_text_output_names_the_copies():
    from auditor.output.evidence import text

    s = summarise(load("synthetic/onnxruntime-profile_cuda-with-memcpy.json"), "p.json")
    out = text.render(s)
    assert "2 memory copies" in out
