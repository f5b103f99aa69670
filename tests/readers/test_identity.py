"""What each evidence file names of its machine (`meta["identity"]`, issue 31), read from the
real files of tests/readers/fixtures; HWiNFO's network rates (`meta["network"]`); and a
document nested deeper than any parser's stack, a fault of its file."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from auditor.readers import evidence_kinds
from auditor.readers.identity import Gpu, Identity, from_hwinfo_groups, known

FIXTURES = Path(__file__).parent / "fixtures"
HERE = Path(__file__).parent


def _identity(rel: str, base: Path = FIXTURES) -> Identity:
    _, read = evidence_kinds.read((base / rel).read_bytes(), rel, local_utc_offset="+02:00")
    return read.meta["identity"]


@pytest.mark.parametrize(
    ("rel", "want"),
    [
        (
            "hwinfo/hwinfo-tui_sensors_DellPrecision5570_head50.csv",
            Identity(
                ("DELL Precision 5570",),
                ("Intel Core i9-12900H",),
                (Gpu("NVIDIA RTX A2000 8GB Laptop"),),
            ),
        ),
        (
            "hwinfo/hwInfoAnalyzer_test_Ryzen9950X3D.csv",
            Identity(
                ("ASRock X870 Pro RS WiFi",),
                ("AMD Ryzen 9 9950X3D",),
                (Gpu("AMD Radeon"), Gpu("NVIDIA GeForce RTX 4090")),
            ),
        ),
        ("powermetrics/text/powermetrics-go_m4_sample.log", Identity(("Mac16,6",))),
        ("powermetrics/text/power-server_sonoma-intel.txt", Identity(("MacBookPro15,1",))),
        ("powermetrics/plist/pumas_powermetrics-output-m1.plist", Identity(("MacBookPro17,1",))),
        (
            "nvidia-smi/telegraf_q-x_a100-sxm4-v12.xml",
            Identity(
                gpus=(
                    Gpu(
                        "NVIDIA A100-SXM4-80GB",
                        "GPU-513536b6-7d19-9063-b049-1e69664bb298",
                        "1650522003820",
                    ),
                )
            ),
        ),
        (
            "nvidia-smi/q_load_h100-80gb_590.48.01.txt",
            Identity(
                gpus=(
                    Gpu(
                        "NVIDIA H100 80GB HBM3",
                        "GPU-00000000-0000-0000-0000-000000000000",
                        "0000000000000",
                    ),
                )
            ),
        ),
        # a GeForce board has no serial: `[N/A]` is no value
        (
            "nvidia-smi/query-gpu_all-fields_load_rtx4080super_595.71.05.csv",
            Identity(
                gpus=(
                    Gpu(
                        "NVIDIA GeForce RTX 4080 SUPER", "GPU-00000000-0000-0000-0000-000000000000"
                    ),
                )
            ),
        ),
    ],
)
def test_real_files_name_their_machine(rel: str, want: Identity) -> None:
    assert _identity(rel) == want


def test_a_windows_ml_record_names_its_assigned_gpus() -> None:
    ident = _identity("windows_ml/example.winml.json", HERE)
    assert all(g.name for g in ident.gpus) and not ident.machines


def test_sensor_group_suffixes_and_repeats_are_left_out() -> None:
    groups = [
        "System: DELL Precision 5570",
        "CPU [#0]: Intel Core i9-12900H: DTS",
        "CPU [#0]: Intel Core i9-12900H: Enhanced",
        "Battery: BYD DELL M59JH27",
        "GPU [#1]: NVIDIA RTX A2000 8GB Laptop",
        "GPU [#1]: NVIDIA RTX A2000 8GB Laptop",
    ]
    assert from_hwinfo_groups(groups) == Identity(
        ("DELL Precision 5570",), ("Intel Core i9-12900H",), (Gpu("NVIDIA RTX A2000 8GB Laptop"),)
    )


def test_hwinfo_network_rates_are_kept_apart() -> None:
    rel = "hwinfo/hwinfo-tui_sensors_DellPrecision5570_head50.csv"
    _, read = evidence_kinds.read((FIXTURES / rel).read_bytes(), rel, local_utc_offset="+02:00")
    net = read.meta["network"]
    assert set(net["source"]) == {
        "Current DL rate [KB/s] #1",
        "Current UP rate [KB/s] #1",
        "Current DL rate [KB/s] #2",
        "Current UP rate [KB/s] #2",
    }
    assert net.height == 4 * 50 and net["kbps"].max() == pytest.approx(59.8)
    first = net.filter(pl.col("source") == "Current DL rate [KB/s] #1").sort("line").row(0)
    assert first[1:] == (2, "Current DL rate [KB/s] #1", 1.7)
    assert not read.value.filter(pl.col("source").str.contains("KB/s")).height


@pytest.mark.parametrize(
    "data",
    [
        b'[\n{"cat": "Session", "name": "model_run", "args": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"},\n]\n",
        b'{"kind": "sample", "t": "2026-03-02T09:00:00Z", "x": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}\n",
    ],
)
def test_a_document_nested_too_deeply_is_a_fault_of_its_file(data: bytes) -> None:
    module, read = evidence_kinds.read(data, "deep.json")
    assert module is not None
    assert any(f.kind == "syntax" and "nested too deeply" in f.message for f in read.faults)


@pytest.mark.parametrize(
    "value", ["To Be Filled By O.E.M.", "System Product Name", "[N/A]", "N/A", "", "Default string"]
)
def test_placeholders_name_nothing(value: str) -> None:
    assert known(value) is None
    assert from_hwinfo_groups([f"System: {value}"]).machines == ()
