"""The parts of `runner residency` on their own: the configuration's checks, the ONNX
Runtime fallback detection, the trial order, the claims' statistics, the B7/B8 verdicts, the
B1 observations on fake sysfs trees, and the atomic run dir."""

from __future__ import annotations

import itertools
import random
import sys
import types
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

import schemas
from runner.b import claims
from runner.b.config import PolicySpec, load_residency_config
from runner.b.policies import ModelFiles, availability, start
from runner.cli import cli
from runner.environment import machine_model, observe_residency, power_mode, power_source
from runner.errors import RunnerError
from runner.order import alternating_rounds
from runner.workloads.bow import BagOfWords

REPO = Path(__file__).resolve().parent.parent


def cfg_file(tmp: Path, body: str) -> Path:
    path = tmp / "c.toml"
    path.write_text(body, encoding="utf-8")
    return path


POLICY = '[[policies]]\nid = "{id}"\nruntime = "{rt}"\ncompute_units = "{cu}"\nrole = "{role}"\n'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("sead = 3\n", "unknown key sead"),
        (POLICY.format(id="a", rt="torch", cu="cpu", role="cpu-only") * 2, "more than once"),
        (POLICY.format(id="a", rt="torch", cu="cuda", role="accelerator"), "no cpu-only policy"),
        (POLICY.format(id="a", rt="torch", cu="cpu", role="accelerator"), "cannot name the CPU"),
        (POLICY.format(id="a", rt="torch", cu="cuda:0", role="cpu-only"), "must run on the CPU"),
        (POLICY.format(id="a", rt="torch", cu="tpu", role="cpu-only"), "cpu, cuda or cuda:N"),
        (
            POLICY.format(id="a", rt="onnxruntime", cu="CUDA", role="accelerator"),
            "execution provider",
        ),
        (
            POLICY.format(id="a", rt="torch", cu="cpu", role="cpu-only")
            + 'precision = "int8-dynamic"\n'
            + POLICY.format(id="b", rt="onnxruntime", cu="CPUExecutionProvider", role="cpu-only")
            + 'precision = "float16"\n',
            "float32 ONNX export",
        ),
        (
            'baseline_policy = "b"\n'
            + POLICY.format(id="a", rt="torch", cu="cpu", role="cpu-only")
            + POLICY.format(id="b", rt="torch", cu="cuda", role="accelerator"),
            "must name a cpu",
        ),
    ],
)
def test_bad_configs_are_refused_before_anything(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(RunnerError, match=message):
        load_residency_config(cfg_file(tmp_path, body))


def test_bad_config_on_the_command_line_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(
        cli, ["residency", "--config", str(cfg_file(tmp_path, "sead = 1\n")), "--out", str(out)]
    )
    assert result.exit_code == 2 and "unknown key sead" in result.output
    assert "Traceback" not in result.output and not list(tmp_path.glob("run*"))


def test_existing_run_dir_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    result = CliRunner().invoke(cli, ["residency", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "already exists" in result.output


def test_embedded_and_shipped_configs_load() -> None:
    default = load_residency_config(None)
    assert default.baseline_policy == "torch-cpu" and default.trials_per_policy == 5
    assert default.warmup == 100 and default.energy.repetitions >= 1
    assert {p.policy_id: p.when for p in default.policies} == {
        "torch-cpu": "always",
        "ort-cpu": "always",
        "torch-cuda": "available",
        "ort-cuda": "available",
    }
    for name in ("residency-float16.toml", "residency-gpu.toml"):
        cfg = load_residency_config(REPO / "examples" / name)
        assert cfg.baseline_policy in {p.policy_id for p in cfg.policies}


def test_ort_fallback_is_a_fault_with_the_active_providers(tmp_path: Path) -> None:
    """CUDAExecutionProvider asked of a build without it: ORT only warns and runs on the
    CPU; the runner records the fault and what is really active."""
    ort = pytest.importorskip("onnxruntime")
    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this onnxruntime build has CUDA")
    from runner_workloads import tiny_rows

    from runner.onnx_export import export
    from runner.workloads.base import TrainingData

    rows = tiny_rows(n_eval=4)
    factory = BagOfWords()
    factory.prepare(
        TrainingData(
            [r["text"] for r in rows], [r["label"] for r in rows], ("fruit", "tools", "weather")
        ),
        tmp_path,
        1,
        8,
        {"epochs": 1},
    )
    form = factory.load(tmp_path, "cpu", "float32", 8, {}).tensor_form()
    assert form is not None
    onnx = export(form, tmp_path / "model.onnx")
    files = ModelFiles(factory, tmp_path, 8, {}, onnx.file, form, 1)
    spec = PolicySpec(
        "ort-cuda", "onnxruntime", "CUDAExecutionProvider", "accelerator", "float32", "always"
    )
    running = start(spec, files)
    assert running.fault is not None and "CUDAExecutionProvider" in running.fault
    assert running.active == ["CPUExecutionProvider"]
    assert running.classify_one("apple banana") in form.classes  # it runs, on the CPU
    assert "no CUDAExecutionProvider" in (availability(spec) or "")
    ok = start(
        PolicySpec(
            "ort-cpu", "onnxruntime", "CPUExecutionProvider", "cpu-only", "float32", "always"
        ),
        files,
    )
    assert ok.fault is None and ok.active == ["CPUExecutionProvider"]


def test_trial_order_alternates_and_is_reproducible() -> None:
    policies = ["a", "b", "c"]
    order = alternating_rounds(policies, 7, random.Random(3))
    assert order == alternating_rounds(policies, 7, random.Random(3))
    assert all(a[0] != b[0] for a, b in itertools.pairwise(order))
    rounds = [order[i : i + 3] for i in range(0, 21, 3)]
    assert all(
        sorted(p for p, _ in r) == policies and {n for _, n in r} == {k + 1}
        for k, r in enumerate(rounds)
    )
    assert alternating_rounds([], 5, random.Random(1)) == []


@pytest.mark.parametrize(
    ("values", "p95", "median"),
    [
        ([5.0], 5.0, 5.0),
        ([1.0, 2.0], 2.0, 1.5),
        (list(map(float, range(1, 101))), 95.0, 50.5),
        (list(map(float, range(1, 21))), 19.0, 10.5),
    ],
)
def test_nearest_rank_p95_and_median(values: list[float], p95: float, median: float) -> None:
    shuffled = values[::-1]
    assert claims.nearest_rank(shuffled) == p95
    assert claims.median(shuffled) == median
    assert claims.nearest_rank([]) is None and claims.median([]) is None


def test_b1_observations_read_sysfs_or_say_why(tmp_path: Path) -> None:
    dmi = tmp_path / "dmi"
    dmi.mkdir()
    assert machine_model(dmi).value is None
    (dmi / "product_name").write_text("ThinkPad X1\n")
    (dmi / "sys_vendor").write_text("LENOVO\n")
    assert machine_model(dmi).value == "LENOVO ThinkPad X1"
    supply = tmp_path / "ps"
    assert power_source(supply).value is None  # absent
    for name, kind, extra in (
        ("AC", "Mains", {"online": "0"}),
        ("BAT0", "Battery", {"status": "Discharging"}),
    ):
        (supply / name).mkdir(parents=True)
        (supply / name / "type").write_text(kind + "\n")
        for k, v in extra.items():
            (supply / name / k).write_text(v + "\n")
    assert power_source(supply).value == "battery"
    (supply / "AC" / "online").write_text("1\n")
    assert power_source(supply).value == "ac"
    cpufreq = tmp_path / "cpufreq"
    assert power_mode(tmp_path / "none", cpufreq).value is None
    cpufreq.mkdir()
    (cpufreq / "scaling_governor").write_text("powersave\n")
    (tmp_path / "profile").write_text("low-power\n")
    assert power_mode(tmp_path / "profile", cpufreq).value == (
        "platform_profile=low-power; governor=powersave"
    )


def test_a_failure_mid_run_leaves_no_complete_looking_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner_workloads import tiny_rows, write_jsonl

    from runner.b import run as run_mod

    corpus = write_jsonl(tmp_path / "corpus.jsonl", tiny_rows(n_eval=20))
    cfg = cfg_file(
        tmp_path,
        f'[corpus]\npath = "{corpus}"\neval_size = 20\n'
        "[gates]\naccuracy_floor = 0.0\n"
        + POLICY.format(id="t", rt="torch", cu="cpu", role="cpu-only"),
    )

    def broken(*args: object, **kwargs: object) -> None:
        raise RunnerError("the trials broke")

    monkeypatch.setattr(run_mod, "run_trials", broken)
    out = tmp_path / "run"
    with pytest.raises(RunnerError, match=r"unfinished files left in .*partial"):
        run_mod.residency(replace(load_residency_config(cfg), off_protocol=True), out)
    assert not out.exists()
    partial = next(tmp_path.glob("run.partial-*"))
    assert (partial / "prompts/sequence.jsonl").is_file()
    assert not (partial / "manifest.json").exists()


def test_verdicts_follow_b4_b7_b8() -> None:
    from runner.b.gates import GateResult
    from runner.b.readback import judge as _verdict
    from runner.b.state import PolicyState

    cfg = load_residency_config(None)
    acc = PolicySpec("gpu", "torch", "cuda", "accelerator", "float32", "always")
    base = claims.PolicyFigures(5, 1.0, 0.05, 40.0, 0.002, "")

    def fig(watts: float | None, jpi: float | None) -> claims.PolicyFigures:
        return claims.PolicyFigures(5, 0.5, 0.03, watts, jpi, "")

    state = PolicyState(acc)
    assert _verdict(cfg, state, fig(30.0, 0.001), base, 0.9)[0] == "accepted"
    assert "residency failure" in _verdict(cfg, state, fig(30.0, 0.001), base, 0.2)[1]
    assert _verdict(cfg, state, fig(50.0, 0.001), base, 0.9)[0] == "rejected"
    assert _verdict(cfg, state, fig(30.0, 0.003), base, 0.9)[0] == "rejected"
    assert "B7 not shown" in _verdict(cfg, state, fig(None, None), base, 0.9)[1]
    assert "no placement evidence" in _verdict(cfg, state, fig(30.0, 0.001), base, None)[1]
    state.gate = GateResult("gpu", 100, 0.95, 0.97, 0.7, 0.99)
    verdict, why = _verdict(cfg, state, fig(30.0, 0.001), base, 0.9)
    assert verdict == "rejected" and "agreement 0.9700 < floor 0.99" in why
    cpu = PolicyState(
        PolicySpec("ort", "onnxruntime", "CPUExecutionProvider", "cpu-only", "float32", "always")
    )
    assert _verdict(cfg, cpu, fig(None, None), base, None)[0] == "accepted"
    deep = replace(cfg, model_tier="deep")
    assert "valid only for a lite model" in _verdict(deep, cpu, fig(None, None), base, None)[1]
    baseline = PolicyState(PolicySpec("torch-cpu", "torch", "cpu", "cpu-only", "float32", "always"))
    assert _verdict(cfg, baseline, base, base, None)[0] == "baseline"
    failed = PolicyState(acc, cannot_start="torch sees no CUDA device")
    assert _verdict(cfg, failed, fig(None, None), base, None) == (
        "rejected",
        "could not start: torch sees no CUDA device",
    )


def test_energy_must_cover_the_unit_a_policy_computes_on() -> None:
    """NVML alone cannot give a cpu-only policy's cost (it would be the GPU board's idle
    draw), nor RAPL alone a GPU policy's; B7 compares only figures from the same
    instruments."""
    from runner.b.energy.window import Analysis
    from runner.b.readback import _require_coverage
    from runner.b.readback import judge as _verdict
    from runner.b.state import PolicyState

    def measured(source: str) -> Analysis:
        return Analysis(
            "measured",
            None,
            "t0",
            "t1",
            2.0,
            energy_j=140.0,
            average_power_w=70.0,
            energy_source=source,
        )

    cpu = PolicyState(PolicySpec("torch-cpu", "torch", "cpu", "cpu-only", "float32", "always"))
    gpu = PolicyState(PolicySpec("gpu", "torch", "cuda", "accelerator", "float32", "always"))
    e = measured("nvml")
    _require_coverage(cpu, e)
    assert e.status == "not_measured" and e.energy_j is None and "RAPL" in (e.reason or "")
    e = measured("rapl")
    _require_coverage(gpu, e)
    assert e.status == "not_measured" and "NVML" in (e.reason or "")
    for state in (cpu, gpu):
        e = measured("nvml+rapl")
        _require_coverage(state, e)
        assert e.status == "measured" and e.energy_j == 140.0
    cfg = load_residency_config(None)
    base = claims.PolicyFigures(5, 1.0, 0.05, 40.0, 0.002, "", "rapl")
    mine = claims.PolicyFigures(5, 0.5, 0.03, 30.0, 0.001, "", "nvml+rapl")
    assert "B7 not shown" in _verdict(cfg, gpu, mine, base, 0.9)[1]


def test_environment_records_each_used_boards_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31: environment.json names each used GPU's serial where NVML gives one (a
    GeForce board gives none: NOT_SUPPORTED, left out), so that an auditor can tell this
    board's traces from another's."""

    class NotSupported(Exception):
        pass

    fake = types.SimpleNamespace(
        nvmlInit=lambda: None,
        nvmlSystemGetDriverVersion=lambda: b"590.48.01",
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetComputeRunningProcesses=lambda h: [],
        nvmlDeviceGetSerial=lambda h: (
            b"1650522003820" if h == 0 else (_ for _ in ()).throw(NotSupported())
        ),
    )
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    gpus = [
        {"index": 0, "name": "NVIDIA A100-SXM4-80GB", "uuid": "GPU-5135"},
        {"index": 1, "name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-8f2e"},
    ]
    env = observe_residency(gpus, "test", None)
    assert env["gpus"][0]["serial"] == "1650522003820"
    assert "serial" not in env["gpus"][1]
    assert env["driver_version"] == "590.48.01"
    schemas.validator("environment_residency").validate(env)
