"""Real runs for the replay tests, made once per session by the runner on small
configurations (the same ones the runner's end-to-end tests use): a protocol A run that
`audit check` accepts, and a protocol B run with a float32 torch and ONNX Runtime policy on
the CPU and a degraded float16 candidate the parity gate rejects. Tests copy them before
changing anything, and re-declare what they change with `redeclare`."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import runfactory as rf
from click.testing import CliRunner
from runner_workloads import tiny_rows, write_jsonl
from test_residency_e2e import CPU_POLICIES
from test_residency_e2e import write_config as write_b_config
from test_runner_e2e import write_config as write_a_config

from runner.cli import cli as runner_cli

CANDIDATE = """
[[policies]]
id = "cand-f16"
runtime = "torch"
compute_units = "cpu"
role = "cpu-only"
precision = "float16"
notes = "degraded candidate: every tenth label rotated"
"""


@pytest.fixture(scope="session")
def run_a(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("replay-a")
    cfg = write_a_config(tmp, write_jsonl(tmp / "corpus.jsonl", tiny_rows(n_eval=40)))
    out = tmp / "run"
    result = CliRunner().invoke(runner_cli, ["execute", "--config", str(cfg), "--out", str(out),
                                             "--quiet"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return out


@pytest.fixture(scope="session")
def run_b(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("replay-b")
    cfg = write_b_config(tmp, CPU_POLICIES + CANDIDATE,
                         f'repetitions = 2\nidle_seconds = 0\npowercap_root = "{tmp / "no"}"\n')
    out = tmp / "run"
    result = CliRunner().invoke(runner_cli, ["residency", "--config", str(cfg), "--out",
                                             str(out), "--quiet", "--off-protocol"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return out


def copy(run: Path, tmp_path: Path) -> Path:
    root = tmp_path / "run"
    shutil.copytree(run, root)
    return root


def redeclare(root: Path) -> None:
    """Re-declare the archived model and tokenizer as they now are (the replay section's
    hashes, `revisions.tokenizer`), then every file's hash: what a forger who edits the
    archive does, so that only what replay checks beyond hashes can catch the edit."""
    manifest = rf.read_json(root, "manifest.json")
    section = manifest["replay"]
    for part in (section["model"], section["tokenizer"]):
        part["sha256"] = hashlib.sha256((root / part["file"]).read_bytes()).hexdigest()
    manifest["revisions"]["tokenizer"] = "sha256:" + section["tokenizer"]["sha256"]
    rf.write_json(root, "manifest.json", manifest)
    rf.rehash(root)
