"""Real runs for the replay tests, made once per session (for every test process:
shared_builds) by the runner on small configurations (the same ones the runner's end-to-end
tests use): a protocol A run that `audit check` accepts (test_integration's clean run), and
a protocol B run with a float32 torch and ONNX Runtime policy on the CPU and a degraded
float16 candidate the parity gate rejects. Tests copy them before changing anything, and
re-declare what they change with `redeclare`."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from shared_builds import shared
from test_residency_e2e import CPU_POLICIES
from test_residency_e2e import write_config as write_b_config
from test_runner_e2e import shared_run

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
    return shared_run(tmp_path_factory)[0]


@pytest.fixture(scope="session")
def run_b(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def build(tmp: Path) -> None:
        cfg = write_b_config(
            tmp,
            CPU_POLICIES + CANDIDATE,
            f'repetitions = 2\nidle_seconds = 0\npowercap_root = "{tmp / "no"}"\n',
        )
        result = CliRunner().invoke(
            runner_cli,
            [
                "residency",
                "--config",
                str(cfg),
                "--out",
                str(tmp / "run"),
                "--quiet",
                "--off-protocol",
            ],
        )
        assert result.exit_code == 0, result.output + repr(result.exception)

    return shared(tmp_path_factory, "replay-b", build) / "run"
