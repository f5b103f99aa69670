"""A configuration that breaks its protocol is refused before anything runs, with a message
naming the rule (docs/protocol.md), unless `--off-protocol` declares the run a diagnostic;
then it runs and its manifest records it (`off_protocol`, schemas/off-protocol.schema.json).
Protocol A: A6.1 (five warm passes, the announced warm-up). Protocol B: B2 (1,000 prompts,
100 warm-up classifications), B3 (five trials), B6 (10 power samples a window)."""

from __future__ import annotations

from pathlib import Path

import pytest
import runfactory as rf
from click.testing import CliRunner
from runner_workloads import tiny_rows, write_jsonl

import schemas
from runner.a.config import load_config, protocol_breaks
from runner.b.config import load_residency_config
from runner.b.config import protocol_breaks as b_breaks
from runner.cli import cli


def a_config(tmp: Path, passes: str) -> Path:
    write_jsonl(tmp / "corpus.jsonl", tiny_rows(n_train=30, n_tune=9, n_eval=12))
    cfg = tmp / "run.toml"
    cfg.write_text(
        f"""
device = "cpu"
[corpus]
path = "corpus.jsonl"
[workload]
options = {{ epochs = 2 }}
[variants]
batches = [4]
context = 8
[passes]
{passes}
""",
        encoding="utf-8",
    )
    return cfg


def b_config(tmp: Path, trials: str, energy: str = "", n_eval: int = 12) -> Path:
    write_jsonl(tmp / "corpus.jsonl", tiny_rows(n_train=30, n_tune=3, n_eval=n_eval))
    cfg = tmp / "residency.toml"
    cfg.write_text(
        f"""
[corpus]
path = "corpus.jsonl"
eval_size = {n_eval}
[workload]
options = {{ epochs = 2 }}
context = 8
[trials]
{trials}
[energy]
repetitions = 1
sampling_interval_s = 0.02
idle_seconds = 0
powercap_root = "{tmp / "no-powercap"}"
{energy}
[placement]
diagnostic_prompts = 3
[gates]
accuracy_floor = 0.0
[[policies]]
id = "torch-cpu"
runtime = "torch"
compute_units = "cpu"
role = "cpu-only"
""",
        encoding="utf-8",
    )
    return cfg


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_three_warm_passes_are_refused_naming_a61_and_nothing_is_written(tmp_path: Path) -> None:
    cfg = a_config(tmp_path, "warm_passes = 3\nwarmup_iterations = 0")
    code, output = invoke("execute", "--config", str(cfg), "--out", str(tmp_path / "run"))
    assert code == 2, output
    assert "A6.1: five warm passes per variant; passes.warm_passes = 3 breaks it" in output
    assert "passes.warmup_iterations = 0 breaks it" in output
    assert "--off-protocol" in output and "Traceback" not in output
    assert not list(tmp_path.glob("run")) + list(tmp_path.glob("run.partial-*"))


def test_protocol_a_breaks_are_exactly_the_rules_broken(tmp_path: Path) -> None:
    ok = load_config(a_config(tmp_path, "warm_passes = 5\nwarmup_iterations = 1"))
    assert protocol_breaks(ok) == []
    seven = load_config(a_config(tmp_path, "warm_passes = 7"))
    assert [(b.rule, b.setting, b.value) for b in protocol_breaks(seven)] == [
        ("A6.1", "passes.warm_passes", 7)
    ]
    assert protocol_breaks(load_config(None)) == []  # the embedded demo run


def test_off_protocol_runs_and_the_manifest_says_so(tmp_path: Path) -> None:
    cfg = a_config(tmp_path, "warm_passes = 2\nwarmup_iterations = 1")
    out = tmp_path / "run"
    code, output = invoke("execute", "--config", str(cfg), "--out", str(out), "--off-protocol")
    assert code == 0, output
    assert "OFF PROTOCOL" in output
    m = rf.read_json(out, "manifest.json")
    assert list(schemas.validator("off_protocol").iter_errors(m["off_protocol"])) == []
    assert m["off_protocol"]["diagnostic"] is True
    assert [b["rule"] for b in m["off_protocol"]["breaks"]] == ["A6.1"]
    assert m["warm_passes_per_variant"] == 2


def test_a_conforming_run_has_no_off_protocol_record(tmp_path: Path) -> None:
    cfg = a_config(tmp_path, "warm_passes = 5\nwarmup_iterations = 1")
    out = tmp_path / "run"
    code, output = invoke("execute", "--config", str(cfg), "--out", str(out), "--quiet")
    assert code == 0, output
    assert "off_protocol" not in rf.read_json(out, "manifest.json")


def test_residency_short_sequence_few_trials_and_warmup_are_refused(tmp_path: Path) -> None:
    cfg = b_config(tmp_path, "per_policy = 3\nwarmup = 10", "min_sample_periods = 4")
    code, output = invoke("residency", "--config", str(cfg), "--out", str(tmp_path / "run"))
    assert code == 2, output
    for line in (
        "B2: the same fixed sequence of 1,000 prompts; corpus.eval_size = 12 breaks it",
        "B2: a warm-up of 100 batch-one classifications before each trial; "
        "trials.warmup = 10 breaks it",
        "B3: at least five trials per compute policy; trials.per_policy = 3 breaks it",
        "B6: at least 10 power samples inside each inference window; "
        "energy.min_sample_periods = 4 breaks it",
    ):
        assert line in output
    assert not list(tmp_path.glob("run")) + list(tmp_path.glob("run.partial-*"))


def test_residency_breaks_are_exactly_the_rules_broken(tmp_path: Path) -> None:
    cfg = load_residency_config(b_config(tmp_path, "per_policy = 5\nwarmup = 100"))
    assert b_breaks(cfg, 1000) == []
    assert [(b.rule, b.value) for b in b_breaks(cfg, 999)] == [("B2", 999)]
    assert b_breaks(load_residency_config(None), 1000) == []  # the embedded default


def test_residency_off_protocol_runs_and_the_manifest_says_so(tmp_path: Path) -> None:
    cfg = b_config(tmp_path, "per_policy = 1\nwarmup = 2")
    out = tmp_path / "run"
    code, output = invoke(
        "residency", "--config", str(cfg), "--out", str(out), "--quiet", "--off-protocol"
    )
    assert code == 0, output
    m = rf.read_json(out, "manifest.json")
    assert list(schemas.validator("manifest_residency").iter_errors(m)) == []
    assert sorted(b["setting"] for b in m["off_protocol"]["breaks"]) == [
        "corpus.eval_size",
        "trials.per_policy",
        "trials.warmup",
    ]
    assert len(rf.read_jsonl(out, "prompts/sequence.jsonl")) == 12


@pytest.mark.parametrize("command", ["execute", "residency"])
def test_help_names_the_flag(command: str) -> None:
    code, output = invoke(command, "--help")
    assert code == 0 and "--off-protocol" in output and "diagnostic" in output
