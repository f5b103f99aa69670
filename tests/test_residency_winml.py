"""Windows ML policies on this machine, through ONNX Runtime itself: the EP device
selection (MAX_EFFICIENCY, which here can only choose the CPU device ONNX Runtime offers),
an explicit CPU session bound to its EP device, ahead-of-time compilation with
ModelCompiler, and the provider, device and node assignment read back from the session. A
short diagnostic run (40 prompts), checked file by file and by the auditor's own reader."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from runner_workloads import tiny_rows, write_jsonl

import schemas
from auditor.engine import run_check
from auditor.readers.placement import windows_ml
from runner.b.config import load_residency_config
from runner.b.run import residency
from runner.errors import RunnerError
from runner.revisions import file_sha256

POLICIES = """
[[policies]]
id = "cpu"
runtime = "windows-ml"
compute_units = "CPUExecutionProvider"
role = "cpu-only"

[[policies]]
id = "max-efficiency-cpu"
runtime = "windows-ml"
compute_units = "MAX_EFFICIENCY"
role = "cpu-only"
when = "available"

[[policies]]
id = "npu"
runtime = "windows-ml"
compute_units = "PREFER_NPU"
role = "accelerator"
when = "available"

[[policies]]
id = "gpu-openvino"
runtime = "windows-ml"
compute_units = "OpenVINOExecutionProvider"
device_type = "GPU"
role = "accelerator"
when = "available"
"""


def write_config(tmp: Path, policies: str = POLICIES) -> Path:
    write_jsonl(tmp / "corpus.jsonl", tiny_rows(n_eval=40))
    cfg = tmp / "residency.toml"
    cfg.write_text(
        f"""
experiment_id = "winml-test"
seed = 5
model_tier = "lite"
[corpus]
path = "corpus.jsonl"
eval_size = 40
[workload]
callable = "runner.workloads.bow:BagOfWords"
options = {{ epochs = 4 }}
context = 16
[trials]
per_policy = 2
warmup = 2
[energy]
repetitions = 1
idle_seconds = 0
powercap_root = "{tmp / "none"}"
{policies}
""",
        encoding="utf-8",
    )
    return cfg


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("winml")
    cfg = replace(load_residency_config(write_config(tmp)), off_protocol=True)
    return residency(cfg, tmp / "run")


def test_selection_compilation_and_assignment_from_onnx_runtime(run: Path) -> None:
    m = json.loads((run / "manifest.json").read_text())
    assert [p["policy_id"] for p in m["policies"]] == ["cpu", "max-efficiency-cpu"]
    left = {p["policy_id"]: p["reason"] for p in m["policies_left_out"]}
    assert "offers no NPU or GPU device" in left["npu"]
    assert "no OpenVINOExecutionProvider on a GPU device" in left["gpu-openvino"]
    for pid, selection in (
        (
            "cpu",
            {"mode": "explicit", "policy": None, "requested_providers": ["CPUExecutionProvider"]},
        ),
        ("max-efficiency-cpu", {"mode": "policy", "policy": "MAX_EFFICIENCY"}),
    ):
        rec = json.loads((run / f"placement/{pid}.winml.json").read_text())
        schemas.validator("windows_ml_placement").validate(rec)
        assert rec["selection"] == selection
        comp = rec["compilation"]
        assert comp["aot"] and comp["succeeded"]
        assert file_sha256(run / comp["compiled_model_file"]) == comp["compiled_model_sha256"]
        assert rec["model_sha256"] == file_sha256(run / "model/model.onnx")
        assert rec["assigned"][0]["execution_provider"] == "CPUExecutionProvider"
        assert rec["assigned"][0]["device_type"] == "CPU"
        assert rec["nodes"] and {n["execution_provider"] for n in rec["nodes"]} == {
            "CPUExecutionProvider"
        }
        # the auditor's own reader takes it as a Windows ML session
        read = windows_ml.read((run / f"placement/{pid}.winml.json").read_bytes(), name=pid)
        assert read.value is not None and read.value.height == len(rec["nodes"])
        assert read.meta["compilation"]["succeeded"] is True
    checks = m["power_state_checks"]
    assert {c["result"] for c in checks.values()} == {"not_applicable"}


def test_the_audit_finds_nothing_against_the_windows_ml_evidence(run: Path) -> None:
    result = run_check(run)
    codes = {f.code for f in result.findings if f.severity == "error"}
    # B0101 (this VM exposes no machine model or power source), B1001 (no energy
    # instrument here), B0201/B0202/B0301/B1003 (a diagnostic run: 40 prompts, 2 trials,
    # so no verdict of it can be accepted); nothing of B04xx, B05xx, B09xx
    assert not codes - {"B0101", "B1001", "B0201", "B0202", "B0301", "B1003"}, codes


def test_a_cpu_only_selection_that_lands_elsewhere_or_a_bad_name_is_refused(tmp_path: Path) -> None:
    bad = POLICIES.replace('compute_units = "MAX_EFFICIENCY"', 'compute_units = "FASTEST"')
    with pytest.raises(RunnerError, match="selection policy"):
        load_residency_config(write_config(tmp_path, bad))
