"""Protocol B test runs, built once per session: the clean runs the mutations start from
(`synthetic`, `macos`, `windows`), the external-format runs and the seed's float16 candidate
(b_fixtures.py), and a real `runner residency` run on this CPU machine (small: 1,000 prompts,
one repetition per window, five trials per policy; no instrument is readable here), built
once for every test process of the session (shared_builds: several files read it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import b_fixtures
import b_runs
import pytest
from click.testing import CliRunner
from runner_workloads import tiny_rows, write_jsonl
from shared_builds import shared

BUILDERS: dict[str, Callable[[Path], Path]] = {
    "synthetic": b_runs.synthetic,
    "macos": b_fixtures.macos_clean,
    "windows": b_fixtures.windows_clean,
    "macos_one_sample": b_fixtures.macos_one_sample,
    "macos_plan_below_floor": b_fixtures.macos_plan_below_floor,
    "windows_cpu_assigned": b_fixtures.windows_cpu_assigned,
    "linux_nvidia_smi": b_fixtures.linux_nvidia_smi,
    "seed_float16": b_fixtures.seed_float16,
}

RUNNER_CONFIG = """
experiment_id = "residency-audit-test"
seed = 11
model_tier = "lite"
baseline_policy = "torch-cpu"
[corpus]
path = "{corpus}"
eval_size = 1000
[workload]
callable = "runner.workloads.bow:BagOfWords"
context = 16
[trials]
per_policy = 5
warmup = 100
[energy]
repetitions = 1
sampling_interval_s = 0.02
idle_seconds = 0
powercap_root = "{powercap}"
[placement]
diagnostic_prompts = 5
operation_share_floor = 0.5
[gates]
accuracy_floor = 0.5
agreement_floor = 0.99

[[policies]]
id = "torch-cpu"
runtime = "torch"
compute_units = "cpu"
role = "cpu-only"

[[policies]]
id = "ort-cpu"
runtime = "onnxruntime"
compute_units = "CPUExecutionProvider"
role = "cpu-only"
"""


class Runs:
    """Build each run on first use, in one session-wide folder."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.base = factory.mktemp("protocol-b")
        self.built: dict[str, Path] = {}

    def __getitem__(self, name: str) -> Path:
        if name not in self.built:
            self.built[name] = (
                self.runner() if name == "runner" else BUILDERS[name](self.base / name)
            )
        return self.built[name]

    def runner(self) -> Path:
        def build(folder: Path) -> None:
            from runner.cli import cli

            tmp = folder / "runner-config"
            tmp.mkdir()
            corpus = write_jsonl(tmp / "corpus.jsonl", tiny_rows(n_eval=1000))
            cfg = tmp / "residency.toml"
            cfg.write_text(
                RUNNER_CONFIG.format(corpus=corpus, powercap=tmp / "no-powercap"), encoding="utf-8"
            )
            result = CliRunner().invoke(
                cli, ["residency", "--config", str(cfg), "--out", str(folder / "runner"), "--quiet"]
            )
            assert result.exit_code == 0, result.output + repr(result.exception)

        return shared(self.factory, "protocol-b-runner", build) / "runner"


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return Runs(tmp_path_factory)
