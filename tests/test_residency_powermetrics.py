"""`runner residency` with powermetrics as its power instrument (the macOS path), end to
end: the runner starts `powermetrics` itself; here the executable on PATH is a stand-in
(tests/standins/powermetrics) that replays CodeCarbon's real `-i 100` MacBook Air (M1) log
of tests/readers/fixtures at its own pace. The runner checks the capture, keeps each
window's sample blocks and computes the energy; `audit check` reads the same blocks with its
own powermetrics reader."""

from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

import pytest
from external_replay import record_as_ac
from runner_workloads import tiny_rows, write_jsonl

from auditor.engine import run_check
from runner.b import power_source
from runner.b.config import load_residency_config
from runner.b.run import residency
from runner.errors import RunnerError

TESTS = Path(__file__).parent
LOG = (
    TESTS
    / "readers/fixtures/powermetrics/text"
    / "codecarbon_powermetrics_log_macbookair10-1_i100.txt"
)


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{TESTS / 'standins'}:{os.environ['PATH']}")
    monkeypatch.setenv("POWERMETRICS_REPLAY", str(LOG))


def write_config(tmp: Path, reps: int = 24) -> Path:
    write_jsonl(tmp / "corpus.jsonl", tiny_rows(n_train=60, n_tune=20, n_eval=1000))
    cfg = tmp / "residency.toml"
    cfg.write_text(
        f"""
experiment_id = "residency-powermetrics"
seed = 3
model_tier = "lite"
[corpus]
path = "corpus.jsonl"
eval_size = 1000
[workload]
callable = "runner.workloads.bow:BagOfWords"
options = {{ epochs = 4 }}
context = 16
[energy]
repetitions = {reps}
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
""",
        encoding="utf-8",
    )
    return cfg


@pytest.fixture(scope="module")
def mac_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The MacBook unplugged: the runner reads `pmset -g batt` (a stand-in saying 'Battery
    Power') at every trial."""
    tmp = tmp_path_factory.mktemp("pm")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", f"{TESTS / 'standins'}:{os.environ['PATH']}")
        mp.setenv("POWERMETRICS_REPLAY", str(LOG))
        mp.setenv("PMSET_SOURCE", "battery")
        mp.setattr(power_source, "SYSTEM", "Darwin")
        return residency(load_residency_config(write_config(tmp)), tmp / "run")


@pytest.mark.slow
def test_powermetrics_capture_started_by_the_runner(mac_run: Path) -> None:
    out = mac_run
    with open(out / "trials.csv", encoding="utf-8", newline="") as f:
        trials = list(csv.DictReader(f))
    assert [t["status"] for t in trials] == ["ok"] * 5
    for t in trials:
        kept = (out / f"power/ort-cpu/trial-{t['trial_index']}.txt").read_bytes()
        assert kept.startswith(b"Machine model: MacBookAir10,1\n")
        assert kept.count(b"*** Sampled system activity") >= 10
        assert t["energy_source"] == "powermetrics"
        # the real log's package power: 0.3-1.5 W
        assert 0.1 < float(t["average_power_w"]) < 2.0
    assert {t["power_source"] for t in trials} == {"battery"}
    assert (
        (out / "power_source/ort-cpu/trial-1.pmset.txt")
        .read_bytes()
        .startswith(b"Now drawing from 'Battery Power'")
    )
    assert [e for e in errors(out) if e[0] != "B0101"] == []


def errors(out: Path) -> list[tuple[str, str]]:
    return [(f.code, f.message) for f in run_check(out).findings if f.severity == "error"]


@pytest.mark.slow
def test_a_trial_on_battery_recorded_as_ac_is_caught(mac_run: Path, tmp_path: Path) -> None:
    lied = tmp_path / "run"
    shutil.copytree(mac_run, lied)
    record_as_ac(lied, "ort-cpu", 3)
    found = [m for c, m in errors(lied) if c == "B0205"]
    assert found and "trial 3" in found[0] and "reported battery" in found[0]


def test_powermetrics_without_root_is_refused_saying_how(
    tmp_path: Path, standin: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.b.energy import powermetrics

    monkeypatch.setattr(powermetrics.os, "geteuid", lambda: 501)
    pm = powermetrics.Powermetrics(None, 1.0, 1.0, tmp_path)
    with pytest.raises(RunnerError, match=r"needs root.*--powermetrics-log"):
        pm.check()


def test_a_capture_the_user_started_is_read(tmp_path: Path, standin: None) -> None:
    """`--powermetrics-log FILE`: the runner reads the user's capture, starts nothing."""
    import subprocess

    from runner.b.energy import powermetrics

    log = tmp_path / "pm.txt"
    proc = subprocess.Popen(
        ["powermetrics", "--samplers", powermetrics.SAMPLERS, "-i", "100", "-o", str(log)]
    )
    try:
        # an upper bound: the check returns at the first samples (a loaded machine may take
        # seconds to start the stand-in)
        pm = powermetrics.Powermetrics(log, 0.1, 20.0, tmp_path)
        assert "every 0.1" in pm.check() and pm.process is None
    finally:
        proc.terminate()
        proc.wait()
