"""A local Hugging Face checkpoint in protocol B: `runner residency` runs its CPU policies
(torch on the checkpoint, ONNX Runtime on its export), and `audit replay` agrees with the
reference answers, every gate and every trial; a user's own ONNX file (`options = { onnx =
..., tokenizer = ... }`) is run by the ONNX Runtime policy and archived as it is. Short
sequences keep it fast, so the runs are declared diagnostics (`--off-protocol`)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

import runfactory as rf
from click.testing import CliRunner
from hf_checkpoint import LABELS, make_checkpoint
from runner_workloads import tiny_rows, write_jsonl

from auditor.engine import run_check
from auditor.replay.core import replay
from runner.cli import cli

N = 24
TORCH_CPU = """
[[policies]]
id = "torch-cpu"
runtime = "torch"
compute_units = "cpu"
role = "cpu-only"
"""
ORT_CPU = """
[[policies]]
id = "ort-cpu"
runtime = "onnxruntime"
compute_units = "CPUExecutionProvider"
role = "cpu-only"
"""


def write_config(folder: Path, options: str, policies: str, name: str) -> Path:
    cfg = folder / f"{name}.toml"
    cfg.write_text(
        f"""
experiment_id = "hf-residency-{name}"
seed = 5
[corpus]
path = "corpus.jsonl"
eval_size = {N}
[workload]
callable = "runner.workloads.hf:SequenceClassifier"
options = {options}
context = 16
[trials]
per_policy = 5
warmup = 3
[energy]
repetitions = 1
sampling_interval_s = 0.02
idle_seconds = 0
powercap_root = "{folder / "no-powercap"}"
[placement]
diagnostic_prompts = 3
[gates]
accuracy_floor = 0.0
agreement_floor = 0.99
{policies}
""",
        encoding="utf-8",
    )
    return cfg


def residency(cfg: Path, out: Path) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli, ["residency", "--config", str(cfg), "--out", str(out), "--quiet", "--off-protocol"]
    )
    return result.exit_code, result.output + repr(result.exception)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hf-b")
    make_checkpoint(tmp / "ckpt")
    write_jsonl(tmp / "corpus.jsonl", tiny_rows(n_train=3, n_tune=3, n_eval=N))
    return tmp


@pytest.fixture(scope="module")
def checkpoint_run(folder: Path) -> Path:
    out = folder / "run"
    code, output = residency(
        write_config(folder, '{ path = "ckpt" }', TORCH_CPU + ORT_CPU, "ckpt"), out
    )
    assert code == 0, output
    return out


def test_cpu_policies_run_and_pass_their_gates(checkpoint_run: Path) -> None:
    trials = _csv(checkpoint_run / "trials.csv")
    assert {r["policy_id"] for r in trials} == {"torch-cpu", "ort-cpu"}
    assert all(r["status"] == "ok" and r["inferences"] == str(N) for r in trials)
    m = rf.read_json(checkpoint_run, "manifest.json")
    assert m["replay"]["tokenizer"]["kind"] == "hf-tokenizers/1"
    assert m["replay"]["labels"] == LABELS
    assert m["off_protocol"]["diagnostic"] is True
    # the ONNX Runtime policy agrees with the torch reference on every prompt
    ort = {a["id"]: a["label"] for a in rf.read_jsonl(checkpoint_run, "gates/ort-cpu.jsonl")}
    ref = {a["id"]: a["label"] for a in rf.read_jsonl(checkpoint_run, "reference/outputs.jsonl")}
    assert ort == ref and len(set(ref.values())) > 1


def test_replay_agrees_with_reference_gates_and_trials(checkpoint_run: Path) -> None:
    result = replay(checkpoint_run, sample_size=N)
    assert result.verdict == "accepted", [f.to_json() for f in result.findings]
    assert len(result.files) == 1 + 2 + 10  # reference, two gates, 2 x 5 trials
    assert all(a.status == "met" and a.threshold.exact for a in result.files)


def test_users_own_onnx_file_is_run_and_archived(folder: Path, checkpoint_run: Path) -> None:
    mine = folder / "exported" / "classifier.onnx"
    mine.parent.mkdir()
    mine.write_bytes((checkpoint_run / "model/model.onnx").read_bytes())
    options = (
        f'{{ onnx = "exported/classifier.onnx", tokenizer = "ckpt/tokenizer.json", '
        f"labels = {LABELS!r} }}"
    ).replace("'", '"')
    out = folder / "run-onnx"
    code, output = residency(write_config(folder, options, ORT_CPU, "onnx"), out)
    assert code == 0, output
    m = rf.read_json(out, "manifest.json")
    digest = hashlib.sha256(mine.read_bytes()).hexdigest()
    assert m["replay"]["model"]["sha256"] == digest == m["artifact_sha256"]
    assert "own ONNX file" in m["replay"]["model"]["exporter"]
    assert not (out / "model/model.safetensors").exists()
    result = replay(out, sample_size=N)
    assert result.verdict == "accepted", [f.to_json() for f in result.findings]
    assert all(a.status == "met" for a in result.files)


def test_onnx_alone_refuses_a_torch_policy(folder: Path) -> None:
    options = (
        f'{{ onnx = "ckpt/none.onnx", tokenizer = "ckpt/tokenizer.json", labels = {LABELS!r} }}'
    ).replace("'", '"')
    (folder / "ckpt/none.onnx").write_bytes(b"")
    code, output = residency(
        write_config(folder, options, TORCH_CPU, "torchless"), folder / "refused"
    )
    assert code == 2 and "no torch model" in output and "torch-cpu" in output
    assert not (folder / "refused").exists()


def _csv(path: Path) -> list[dict[str, str]]:
    import csv

    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _sealed_copy(run: Path, dest: Path) -> Path:
    shutil.copytree(run, dest)
    return dest


def _reseal(root: Path) -> None:
    m = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    m["artifacts"] = {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }
    (root / "manifest.json").write_text(json.dumps(m, indent=1), encoding="utf-8")


def _codes(root: Path) -> set[str]:
    return {f.code for f in run_check(root).findings if f.severity == "error"}


def test_the_checkpoint_kept_is_the_one_the_revisions_pin(
    checkpoint_run: Path, tmp_path: Path
) -> None:
    """Issue 31: the run's own checkpoint (weights, tokenizer.json, config.json) against its
    revisions and classes: as the runner wrote it, neither B0108 nor B0109; tokenizer.json
    replaced after the run (revisions left), B0108; config.json's id2label in another order
    than the run reads its scores (replay.labels), B0109."""
    assert not {"B0108", "B0109"} & _codes(checkpoint_run)
    replaced = _sealed_copy(checkpoint_run, tmp_path / "replaced")
    tok = replaced / "model/tokenizer.json"
    tok.write_bytes(tok.read_bytes().replace(b'"[UNK]"', b'"[unk]"', 1))
    _reseal(replaced)
    assert "B0108" in _codes(replaced)
    relabelled = _sealed_copy(checkpoint_run, tmp_path / "relabelled")
    cfg = relabelled / "model/config.json"
    doc = json.loads(cfg.read_text(encoding="utf-8"))
    doc["id2label"] = {str(i): lab for i, lab in enumerate(reversed(LABELS))}
    cfg.write_text(json.dumps(doc), encoding="utf-8")
    _reseal(relabelled)
    assert "B0109" in _codes(relabelled)
