"""Core ML on this Linux machine: the packages are converted and calibrated here for real
(coremltools); predictions need macOS, so the run's Core ML policy answers through a
stand-in predictor that runs the package's ONNX twin (the accepted ONNX export it was
converted from, checked by the SHA-256 its conversion manifest records) in ONNX Runtime.
Everything else is the runner's real path: the gate per package against the ONNX model,
powermetrics (a stand-in replaying CodeCarbon's real log) and the audit. Skipped without
coremltools (the `macos` extra)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from runner_workloads import tiny_rows, write_jsonl

from auditor.engine import run_check
from runner.b import coreml, power_source
from runner.b.config import load_residency_config
from runner.b.run import residency
from runner.revisions import file_sha256

ct = pytest.importorskip("coremltools")
TESTS = Path(__file__).parent
LOG = (
    TESTS
    / "readers/fixtures/powermetrics/text"
    / "codecarbon_powermetrics_log_macbookair10-1_i100.txt"
)


def twin_predictor(package: Path, compute_units: str) -> coreml.Predictor:
    """Answers as the package's ONNX twin: the run's model/model.onnx, the file its
    conversion manifest names by SHA-256."""
    import onnxruntime as ort

    conv = json.loads(package.with_suffix("").with_suffix(".conversion.json").read_text())
    onnx = package.parents[1] / "model.onnx"
    assert file_sha256(onnx) == conv["source_onnx_sha256"]
    session = ort.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
    return lambda feed: session.run(
        None, {"ids": feed["ids"].astype(np.int64), "offsets": np.zeros(1, dtype=np.int64)}
    )[0]


def write_config(tmp: Path) -> Path:
    write_jsonl(tmp / "corpus.jsonl", tiny_rows(n_train=60, n_tune=20, n_eval=1000))
    cfg = tmp / "residency.toml"
    cfg.write_text(
        """
experiment_id = "residency-coreml"
seed = 3
model_tier = "lite"
baseline_policy = "ort-cpu"
[corpus]
path = "corpus.jsonl"
eval_size = 1000
[workload]
callable = "runner.workloads.bow:BagOfWords"
options = { epochs = 4 }
context = 16
[energy]
repetitions = 24
sampling_interval_s = 0.1
min_sample_periods = 10
min_counter_updates = 1
idle_seconds = 0.3
instruments = ["powermetrics"]
log_timeout_s = 20
[[policies]]
id = "ort-cpu"
runtime = "onnxruntime"
compute_units = "CPUExecutionProvider"
role = "cpu-only"
[[policies]]
id = "coreml-cpu"
runtime = "coreml"
compute_units = "cpuOnly"
role = "cpu-only"
package = "w8a8"
""",
        encoding="utf-8",
    )
    return cfg


@pytest.fixture(scope="module")
def mac_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("coreml")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", f"{TESTS / 'standins'}:{os.environ['PATH']}")
        mp.setenv("POWERMETRICS_REPLAY", str(LOG))
        mp.setattr(power_source, "SYSTEM", "Darwin")
        mp.setattr(coreml, "availability", lambda spec: None)
        mp.setattr(coreml, "load_predictor", twin_predictor)
        return residency(load_residency_config(write_config(tmp)), tmp / "run")


def errors(out: Path) -> list[tuple[str, str]]:
    return [(f.code, f.message) for f in run_check(out).findings if f.severity == "error"]


@pytest.mark.slow
def test_packages_gated_against_the_onnx_model_then_measured(mac_run: Path) -> None:
    m = json.loads((mac_run / "manifest.json").read_text())
    pkgs = {p["name"]: p for p in m["coreml_packages"]}
    assert {p["status"] for p in pkgs.values()} == {"converted"}
    conv = json.loads((mac_run / pkgs["w8a8"]["conversion_manifest"]).read_text())
    assert conv["quantization"]["calibration_split"] == "tune"
    assert conv["quantization"]["calibration_prompts"] == 20
    policy = next(p for p in m["policies"] if p["policy_id"] == "coreml-cpu")
    assert policy["artifact_file"] == "model/coreml/w8a8.mlpackage"
    assert policy["artifact_sha256"] == pkgs["w8a8"]["package_sha256"]
    gates = json.loads((mac_run / "gates/gates.json").read_text())
    gated = next(p for p in gates["policies"] if p["policy_id"] == "coreml-cpu")
    assert gated["artifact_sha256"] == pkgs["w8a8"]["package_sha256"]
    assert m["reference"]["artifact_file"] == "model/model.onnx"
    assert [e for e in errors(mac_run) if e[0] != "B0101"] == []


@pytest.mark.slow
def test_a_package_swapped_after_its_gate_is_caught(mac_run: Path, tmp_path: Path) -> None:
    lied = tmp_path / "run"
    shutil.copytree(mac_run, lied)
    w8a8, f16 = lied / "model/coreml/w8a8.mlpackage", lied / "model/coreml/float16.mlpackage"
    shutil.rmtree(w8a8)
    shutil.copytree(f16, w8a8)
    m = json.loads((lied / "manifest.json").read_text())
    m["artifacts"] = {
        p.relative_to(lied).as_posix(): file_sha256(p)
        for p in sorted(lied.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }
    (lied / "manifest.json").write_text(json.dumps(m, indent=1))
    found = [msg for c, msg in errors(lied) if c == "B0103"]
    assert found and "model/coreml/w8a8.mlpackage" in found[0]


def test_conversion_and_calibration_record_each_package(tmp_path: Path) -> None:
    """Both packages of a small bag-of-words model: converted, their SHA-256 over their
    files, the W8A8 one quantized (int8 weights dequantized by constexpr ops, activations
    quantized) from the tune texts only."""
    import torch

    from runner.b.coreml_convert import convert_packages, package_sha256
    from runner.workloads.base import TensorForm
    from runner.workloads.bow import BagOfWordsModel

    torch.manual_seed(0)
    model = BagOfWordsModel(50, 8, 3)
    words = {w: i for i, w in enumerate("abcdefghijklmnopqrstuvwxyz")}
    seen: list[str] = []

    def encode(texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        seen.extend(texts)
        return torch.tensor([words[c] for c in texts[0]]), torch.tensor([0])

    form = TensorForm(model, encode, ("ids", "offsets"), ["x", "y", "z"])
    tune = ["abc", "hello", "world", "zzz"]
    out = convert_packages(form, tune, tmp_path, {"source_onnx_sha256": "0" * 64}, print)
    assert [p["status"] for p in out] == ["converted", "converted"]
    assert set(seen) == set(tune)  # calibration and tracing saw the tune texts only
    for p in out:
        assert p["package_sha256"] == package_sha256(tmp_path / p["package"])
        conv = json.loads((tmp_path / p["conversion_manifest"]).read_text())
        assert conv["package_sha256"] == p["package_sha256"]
    spec = ct.models.MLModel(str(tmp_path / out[1]["package"]), skip_model_load=True)
    ops = (
        {
            op.type
            for op in spec.get_spec()
            .mlProgram.functions["main"]
            .block_specializations["CoreML7"]
            .operations
        }
        if hasattr(spec.get_spec(), "mlProgram")
        else set()
    )
    assert "constexpr_affine_dequantize" in ops or "constexpr_blockwise_shift_scale" in ops
    assert "quantize" in ops or "dequantize" in ops
