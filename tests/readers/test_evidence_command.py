"""`audit evidence` on every real fixture: which reader takes it, whether it is usable, and
the frame's figures, written by hand from reading each file; the JSON output against its
schema; the registry looks at the head of a file only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import schemas
from auditor.cli import cli
from auditor.evidence import summarise
from auditor.readers import evidence_kinds
from auditor.readers._common import HEAD_BYTES

FIXTURES = Path(__file__).parent / "fixtures"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "external"

# fixture -> (reader, exit code, readings or nodes, samples or nodes on the accelerator,
#             last time (power, UTC with --local-utc-offset +00:00) or operation share)
EXPECTED = {
    "powermetrics/text/power-server_sonoma-m1max.txt": (
        "powermetrics-text",
        0,
        4,
        1,
        "2023-10-23T14:51:12Z",
    ),
    "powermetrics/text/power-server_monterey-m2.txt": (
        "powermetrics-text",
        0,
        8,
        1,
        "2023-11-28T10:28:55Z",
    ),
    "powermetrics/text/power-server_sonoma-intel.txt": (
        "powermetrics-text",
        0,
        1,
        1,
        "2024-01-15T17:21:32Z",
    ),
    "powermetrics/text/power-server_tahoe-m4-summary.txt": ("powermetrics-text", 1, 0, 0, None),
    "powermetrics/text/powermetrics-go_m4_sample.log": (
        "powermetrics-text",
        0,
        4,
        1,
        "2025-11-08T06:54:21Z",
    ),
    "powermetrics/plist/pumas_powermetrics-output-m1.plist": (
        "powermetrics-plist",
        0,
        4,
        1,
        "2023-04-01T13:18:36Z",
    ),
    "powermetrics/plist/pumas_powermetrics-output-m1-2.plist": (
        "powermetrics-plist",
        0,
        4,
        1,
        "2023-04-02T18:48:10Z",
    ),
    "powermetrics/plist/pumas_powermetrics-output-m2ultra.plist": (
        "powermetrics-plist",
        0,
        4,
        1,
        "2024-04-12T22:42:39Z",
    ),
    "hwinfo/hwInfoAnalyzer_test_Ryzen9950X3D.csv": (
        "hwinfo",
        0,
        14 * 36,
        14,
        "2025-08-14T22:31:13.457000Z",
    ),
    "hwinfo/hwinfo-tui_sensors_DellPrecision5570_head50.csv": (
        "hwinfo",
        0,
        50 * 17,
        50,
        "2025-08-13T14:00:17.893000Z",
    ),
    "nvidia-smi/VirtualClient_query-gpu-8xH100.csv": (
        "nvidia-smi-csv",
        0,
        16,
        4,
        "2024-03-15T13:57:59.861000Z",
    ),
    "nvidia-smi/VirtualClient_query-gpu-1xH100.csv": (
        "nvidia-smi-csv",
        0,
        2,
        1,
        "2024-03-15T13:57:59.791000Z",
    ),
    "nvidia-smi/VirtualClient_query-gpu-1xT4-NA.csv": (
        "nvidia-smi-csv",
        0,
        1,
        1,
        "2024-08-29T16:44:05.490000Z",
    ),
    "nvidia-smi/query-gpu_all-fields_load_h100-80gb_590.48.01.csv": (
        "nvidia-smi-csv",
        0,
        3,
        1,
        "2026-07-14T08:12:53.353000Z",
    ),
    "nvidia-smi/query-gpu_all-fields_load_h100-mig_590.48.01.csv": (
        "nvidia-smi-csv",
        0,
        3,
        1,
        "2026-07-14T09:00:44.579000Z",
    ),
    "nvidia-smi/query-gpu_all-fields_load_rtx4080super_595.71.05.csv": (
        "nvidia-smi-csv",
        0,
        3,
        1,
        "2026-06-26T11:59:58.761000Z",
    ),
    "nvidia-smi/query-gpu_all-fields_load_win_rtx2080super_591.86.csv": (
        "nvidia-smi-csv",
        0,
        2,
        1,
        "2026-06-22T23:04:33.297000Z",
    ),
    "nvidia-smi/q_load_h100-80gb_590.48.01.txt": ("nvidia-smi-q", 0, 3, 1, "2026-07-14T08:12:53Z"),
    "nvidia-smi/q_load_l40s_595.80.txt": ("nvidia-smi-q", 0, 2, 1, "2026-07-03T08:33:53Z"),
    "nvidia-smi/q_load_rtx4080super_595.71.05.txt": (
        "nvidia-smi-q",
        0,
        2,
        1,
        "2026-06-26T11:59:58Z",
    ),
    "nvidia-smi/telegraf_q-x_a100-sxm4-v12.xml": (
        "nvidia-smi-xml",
        0,
        1,
        1,
        "2023-08-04T11:44:30Z",
    ),
    "nvidia-smi/telegraf_q-x_rtx-4000-sff-ada-v13.xml": (
        "nvidia-smi-xml",
        0,
        2,
        1,
        "2026-08-06T01:03:40Z",
    ),
    "nvidia-smi/dmon_load_h100-80gb_590.48.01.txt": ("nvidia-smi-dmon", 0, 5, 5, None),
    "nvidia-smi/dmon_load_h100-mig_590.48.01.txt": ("nvidia-smi-dmon", 0, 5, 5, None),
    "nvidia-smi/dmon_load_rtx4080super_595.71.05.txt": ("nvidia-smi-dmon", 0, 5, 5, None),
    "nvidia-smi/dmon_load_win_rtx2080super_591.86.txt": ("nvidia-smi-dmon", 0, 5, 5, None),
    "nvidia-smi/nvidia_gpu_exporter_capture__linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt": (
        "nvidia-smi-bundle",
        0,
        12,
        4,
        "2026-07-14T08:12:53.353000Z",
    ),
    "nvidia-smi/nvidia_gpu_exporter_capture__windows-x86_64__nvidia-geforce-rtx-2080-super__"
    "591.86.txt": ("nvidia-smi-bundle", 0, 6, 4, "2026-06-22T23:04:33.297000Z"),
    "nvidia-smi/default-table_load_h100-mig_590.48.01.txt": ("nvidia-smi-table", 1, 0, 0, None),
    "nvidia-smi/default-table_load_rtx4080super_595.71.05.txt": ("nvidia-smi-table", 1, 0, 0, None),
    "nvidia-smi/VirtualClient_query-c2c-multiple-gpu.txt": ("nvidia-smi-c2c", 1, 0, 0, None),
    "onnxruntime-profile/quadric-onnxruntime_1gpnpu_2025-01-31_02-41-47.json": (
        "onnxruntime-profile",
        0,
        77,
        0,
        0.0,
    ),
    "onnxruntime-profile/quadric-onnxruntime_4cpu_2025-01-29_23-03-39_head.json": (
        "onnxruntime-profile",
        0,
        130,
        0,
        0.0,
    ),
    "coreml/coreml_modelc_profling_README_MLComputePlan_excerpt.log": (
        "coreml-compute-plan",
        0,
        13,
        10,
        10 / 13,
    ),
    "coreml/coreml_modelc_profling_without_compute_plan_2.csv": (
        "coreml-profiling-csv",
        0,
        119,
        114,
        114 / 119,
    ),
    "coreml/coreml_modelc_profling_without_compute_plan_output.txt": (
        "coreml-profiling-text",
        0,
        119,
        114,
        114 / 119,
    ),
    # real files collected for issue 22 (SOURCES.md, section "Added for issue 22")
    "powermetrics/text/codecarbon_powermetrics_log_macbookair10-1_i100.txt": (
        "powermetrics-text",
        0,
        7 * 10,
        10,
        "2023-11-10T11:37:09.217800Z",
    ),
    "powermetrics/text/singhkays_GB5-Compute-Metal_macmini9-1_head20.txt": (
        "powermetrics-text",
        0,
        7 * 20,
        20,
        "2021-02-28T08:17:23.264280Z",
    ),
    "powermetrics/plist/catapult_powermetrics_output_macbookpro11-3.plist": (
        "powermetrics-plist",
        0,
        1,
        1,
        "2014-06-13T17:07:20Z",
    ),
    "powermetrics/plist/catapult_powermetrics_stream_macbookpro10-1_head2.plist": (
        "powermetrics-plist",
        0,
        2,
        2,
        "2014-01-21T23:14:41Z",
    ),
    "powermetrics/plist/catapult_powermetrics_vmware.plist": ("powermetrics-plist", 1, 0, 0, None),
    "powermetrics/plist/catapult_powermetrics_unsupported_hardware.plist": (
        "powermetrics-plist",
        1,
        0,
        0,
        None,
    ),
    "powermetrics/plist/matiasinsaurralde_gpu_power.plist": (
        "powermetrics-plist",
        0,
        1,
        1,
        "2025-07-06T04:15:28Z",
    ),
    "powermetrics/plist/matiasinsaurralde_gpu_power_multiple_samples.plist": (
        "powermetrics-plist",
        0,
        5,
        5,
        "2025-07-06T05:15:36Z",
    ),
    "nvidia-smi/telegraf_q-x_dual-rtx-2080-v13.xml": (
        "nvidia-smi-xml",
        0,
        2,
        1,
        "2025-12-30T09:49:44Z",
    ),
    "nvidia-smi/telegraf_q-x_tesla-t4-v11.xml": ("nvidia-smi-xml", 0, 1, 1, "2023-04-24T16:22:39Z"),
    "nvidia-smi/telegraf_q-x_gt-1030-v11.xml": ("nvidia-smi-xml", 1, 0, 0, None),
    "nvidia-smi/telegraf_q-x_gtx-1070-ti-v10.xml": ("nvidia-smi-xml", 1, 0, 0, None),
    "nvidia-smi/query-gpu_all-fields_load_h200_590.48.01.csv": (
        "nvidia-smi-csv",
        0,
        3,
        1,
        "2026-07-03T22:11:09.763000Z",
    ),
    "nvidia-smi/query-gpu_all-fields_load_rtx2080super_610.57.04.csv": (
        "nvidia-smi-csv",
        0,
        2,
        1,
        "2026-08-12T21:54:00.311000Z",
    ),
    "nvidia-smi/query-gpu_all-fields_load_win_rtx2080super_610.62.csv": (
        "nvidia-smi-csv",
        0,
        2,
        1,
        "2026-06-24T10:17:56.770000Z",
    ),
    "nvidia-smi/dmon_load_h200_590.48.01.txt": ("nvidia-smi-dmon", 0, 5, 5, None),
    "nvidia-smi/dmon_load_win_rtx2080super_610.62.txt": ("nvidia-smi-dmon", 0, 5, 5, None),
    # SYNTHETIC files, labelled so in SOURCES.md: no real file of these was found
    "synthetic/hwinfo_german-power-names_from-Ryzen9950X3D.csv": (
        "hwinfo",
        0,
        14 * 36,
        14,
        "2025-08-14T22:31:13.457000Z",
    ),
    "synthetic/hwinfo_chinese-power-names_from-Ryzen9950X3D.csv": (
        "hwinfo",
        0,
        14 * 36,
        14,
        "2025-08-14T22:31:13.457000Z",
    ),
    "synthetic/onnxruntime-profile_cuda-with-memcpy.json": ("onnxruntime-profile", 0, 8, 4, 4 / 6),
    "synthetic/nvidia-smi_dmon_-s_u_no-power.txt": ("nvidia-smi-dmon", 1, 0, 0, None),
}


def test_every_fixture_has_an_expectation():
    on_disk = {
        p.relative_to(FIXTURES).as_posix()
        for p in FIXTURES.rglob("*")
        if p.is_file() and p.name != "SOURCES.md"
    }
    assert on_disk == set(EXPECTED)


def test_copies_are_the_shared_files():
    if not SHARED.is_dir():
        pytest.skip("../shared is not beside this checkout; the copies are used alone")
    shared = [rel for rel in EXPECTED if (SHARED / rel).is_file()]
    assert len(shared) == 36  # the files of the shared fixtures; the others were added here
    for rel in shared:
        assert (FIXTURES / rel).read_bytes() == (SHARED / rel).read_bytes(), rel


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_audit_evidence_on_each_fixture(rel):
    reader, code, rows, second, last = EXPECTED[rel]
    result = CliRunner().invoke(
        cli, ["evidence", str(FIXTURES / rel), "--format", "json", "--local-utc-offset", "+00:00"]
    )
    assert result.exit_code == code, result.output
    out = json.loads(result.output)
    schemas.validator("evidence_summary").validate(out)
    assert out["reader"] == reader and out["exit_code"] == code
    assert all(f["file"] == str(FIXTURES / rel) for f in out["faults"])
    if out["family"] == "power" and out["power"]:
        assert (out["power"]["readings"], out["power"]["samples"]) == (rows, second)
        assert out["power"]["end"] == last
    elif out["placement"]:
        p = out["placement"]
        assert (p["nodes"], p["ops_on_accelerator"]) == (rows, second)
        assert p["operation_share"] == pytest.approx(last)
    else:
        assert code == 1 and out["reason"]


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_the_head_alone_names_the_reader(rel):
    head = (FIXTURES / rel).read_bytes()[:HEAD_BYTES]
    assert evidence_kinds.choose(head, Path(rel).name).name == EXPECTED[rel][0]


def test_text_output_and_usage_errors():
    path = str(FIXTURES / "hwinfo/hwinfo-tui_sensors_DellPrecision5570_head50.csv")
    result = CliRunner().invoke(cli, ["evidence", path])
    assert result.exit_code == 0
    assert "reader    hwinfo" in result.output and "50 samples" in result.output
    assert "timezone" in result.output
    assert CliRunner().invoke(cli, ["evidence", path, "--local-utc-offset", "1h"]).exit_code != 0
    assert CliRunner().invoke(cli, ["evidence", path, "--reader", "nope"]).exit_code != 0
    forced = CliRunner().invoke(cli, ["evidence", path, "--reader", "nvidia-smi-csv"])
    assert forced.exit_code == 1 and "header" in forced.output


def test_unknown_file_and_gaps(tmp_path):
    s = summarise(b"hello\n", "x.txt")
    assert s.exit_code == 1 and s.reader is None
    lines = ["timestamp, index, power.draw [W]"] + [
        f"2025/01/01 00:00:{t:02d}.000, 0, 100" for t in (0, 1, 2, 3, 9, 10)
    ]
    s = summarise("\n".join(lines).encode(), "g.csv", local_utc_offset="+00:00")
    assert s.power.median_interval_s == 1.0 and s.power.max_interval_s == 6.0
    assert [g["line"] for g in s.power.gaps] == [6] and s.power.gap_count == 1
