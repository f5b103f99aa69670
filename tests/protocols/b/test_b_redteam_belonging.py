"""Issue 31, protocol B: whose evidence it is. Lies the audit once accepted (every file
re-hashed, every claim recomputed from the edited files, as a dishonest submitter would),
each beside its honest twin, real tool files wherever one exists.

1. Another machine's traces: a powermetrics header of another Mac, HWiNFO sensor groups of
   another CPU or GPU, an nvidia-smi GPU UUID or serial that is not environment.json's
   (B0105).
2. Power-state evidence judged on its own word (B9): a battery trace whose battery charges,
   an explicit CPU session offered as the battery evidence, an idle trace recorded before
   the trials or of another GPU, a battery record of another model (B0106), a release
   threshold the run declares itself.
3. Trace integrity: an NVML counter that decreases under a declared wrap range (a reset,
   B6); network traffic during the trials (B0205).
4. Windows ML without ahead-of-time compilation (B0501); a profile nested deeper than any
   parser's stack (a finding on the file, not B0000).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import b_fixtures as bf
import b_runs as br
import pytest

from auditor.engine import audit, run_check
from auditor.protocols.b.facts.belonging import machine_mismatches, run_machine
from auditor.protocols.b.facts.power_state import BATTERY, IDLE, power_state_checks

A100_XML = bf.FIXTURES / "nvidia-smi/telegraf_q-x_a100-sxm4-v12.xml"
"""A real `nvidia-smi -q -x` of an A100 whose UUID and serial are not anonymized."""
A100_UUID = "GPU-513536b6-7d19-9063-b049-1e69664bb298"
RYZEN_CPU = b"CPU [#0]: AMD Ryzen 9 9950X3D"
"""The CPU the real Ryzen HWiNFO log's sensor groups name."""


def _copy(runs, name: str, tmp_path: Path) -> Path:
    root = tmp_path / "run"
    shutil.copytree(runs[name], root)
    return root


def _errors(root: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in run_check(root).findings:
        if f.severity == "error":
            out.setdefault(f.code, []).append(f.message)
    return out


def _accepted(root: Path) -> None:
    result = run_check(root)
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]


def _replace(root: Path, rel: str, old: bytes, new: bytes) -> None:
    path = root / rel
    data = path.read_bytes()
    assert old in data, (rel, old)
    path.write_bytes(data.replace(old, new))
    br.rehash(root)


def _manifest(root: Path, fn) -> None:
    br.edit_json(root, "manifest.json", fn, seal=False)
    br.rehash(root)


def _environment(root: Path, fn) -> None:
    br.edit_json(root, "environment.json", fn)


# -- 1. another machine's traces -----------------------------------------------------------


def test_a_powermetrics_log_of_another_mac(runs, tmp_path: Path) -> None:
    """The one-sample Mac run's traces are the real M4 log (`Machine model: Mac16,6`), and
    environment.json says Mac16,6: the log is the run's. Told Mac15,6, every trace is another
    machine's."""
    root = _copy(runs, "macos_one_sample", tmp_path)
    assert "B0105" not in _errors(root)
    assert run_machine(audit(root)[0]).parts["machine"] == ("Mac16,6",)
    _environment(root, lambda e: e["machine"].update(value="Mac15,6"))
    errors = _errors(root)
    assert len(errors["B0105"]) == 10, errors
    assert (
        "names the machine Mac16,6; the run's is Mac15,6 (environment.json)" in errors["B0105"][0]
    )


def test_hwinfo_sensor_groups_of_another_cpu(runs, tmp_path: Path) -> None:
    """One baseline trace's sensor groups name the Ryzen 9950X3D of the real Ryzen log, the
    other nine the Dell's i9-12900H: environment.json names no CPU, so the run's is the one
    most traces name."""
    root = _copy(runs, "windows", tmp_path)
    _replace(root, "power/cpu/trial-3.csv", b"CPU [#0]: Intel Core i9-12900H", RYZEN_CPU)
    errors = _errors(root)
    assert list(errors) == ["B0105"], errors
    assert errors["B0105"] == [
        "power/cpu/trial-3.csv is not evidence of this run's machine: it names the cpu AMD "
        "Ryzen 9 9950X3D; the run's is Intel Core i9-12900H (power/cpu/trial-1.csv and 9 "
        "other evidence file(s))"
    ]


def test_environment_naming_the_cpu_as_windows_does(runs, tmp_path: Path) -> None:
    """The honest twin: environment.json names the CPU as Windows does (`12th Gen Intel(R)
    Core(TM) i9-12900H`), HWiNFO's groups `Intel Core i9-12900H`: the same CPU."""
    root = _copy(runs, "windows", tmp_path)
    _environment(
        root, lambda e: e.update(cpu={"model": "12th Gen Intel(R) Core(TM) i9-12900H", "count": 20})
    )
    _accepted(root)
    m = run_machine(audit(root)[0])
    assert m.parts["cpu"] == ("12th Gen Intel(R) Core(TM) i9-12900H",)
    assert m.sources["cpu"] == "environment.json"


def test_hwinfo_sensor_groups_of_another_gpu(runs, tmp_path: Path) -> None:
    root = _copy(runs, "windows", tmp_path)
    _replace(
        root,
        "power/gpu/trial-2.csv",
        b"GPU [#1]: NVIDIA RTX A2000 8GB Laptop",
        b"GPU [#1]: NVIDIA GeForce RTX 4090",
    )
    errors = _errors(root)
    assert list(errors) == ["B0105"], errors
    assert (
        "names the gpu NVIDIA GeForce RTX 4090; the run's is NVIDIA RTX A2000 "
        "(environment.json)" in errors["B0105"][0]
    )


@pytest.mark.parametrize(
    ("gpu", "part"),
    [
        ({"name": "NVIDIA A100-SXM4-80GB", "uuid": A100_UUID, "serial": "1650522003820"}, None),
        (
            {"name": "NVIDIA A100-SXM4-80GB", "uuid": "GPU-8f2e0c1a-1111-2222-3333-444455556666"},
            "gpu uuid",
        ),
        ({"name": "NVIDIA A100-SXM4-80GB", "serial": "1650522009999"}, "gpu serial"),
        ({"name": "NVIDIA H100 80GB HBM3"}, "gpu"),
    ],
)
def test_an_nvidia_smi_report_of_another_gpu(
    runs, tmp_path: Path, gpu: dict, part: str | None
) -> None:
    """A real nvidia-smi report of an A100 kept beside the run: its GPU UUID and serial are
    environment.json's (the honest twin), or another board's."""
    root = _copy(runs, "synthetic", tmp_path)
    (root / "power_state").mkdir()
    shutil.copy(A100_XML, root / "power_state/gpu.xml")
    _environment(root, lambda e: e.update(gpus=[{"index": 0, **gpu}]))
    found = machine_mismatches(audit(root)[0])
    assert [m.part for m in found] == ([part] if part else []), found
    assert ("B0105" in _errors(root)) == (part is not None)


# -- 2. power-state evidence on its own word -------------------------------------------------


def _battery_trace(root: Path, charge_w: str, gpu_w: str = "0.000") -> None:
    """The battery check's evidence becomes the real Dell log with its battery's Charge Rate
    and the discrete GPU's power set (HWiNFO's own columns)."""
    data = bf.hwinfo_set(
        bf.hwinfo_gpu_released(bf.HWINFO_DELL.read_bytes(), 0, gpu_w), "Charge Rate [W]", charge_w
    )
    (root / "power_state/battery-hwinfo.csv").write_bytes(data)
    _manifest(
        root,
        lambda m: m["power_state_checks"][BATTERY].update(
            evidence="power_state/battery-hwinfo.csv"
        ),
    )


def test_a_battery_trace_whose_battery_charges(runs, tmp_path: Path) -> None:
    root = _copy(runs, "windows", tmp_path)
    _battery_trace(root, "24.500")
    errors = _errors(root)
    assert list(errors) == ["B0901"], errors
    assert "Charge Rate [W]) reads +24.5 W" in errors["B0901"][0]
    assert "the battery charges, the machine was on AC" in errors["B0901"][0]


def test_a_battery_trace_whose_battery_discharges(runs, tmp_path: Path) -> None:
    root = _copy(runs, "windows", tmp_path)
    _battery_trace(root, "-18.200")
    _accepted(root)
    shows = power_state_checks(audit(root)[0])[BATTERY].shows
    assert shows is not None and "battery sensor discharges throughout" in shows


def test_a_battery_trace_without_a_discharging_battery_shows_nothing(runs, tmp_path: Path) -> None:
    """The real log as HWiNFO wrote it on AC (Charge Rate 0 W): it does not show the
    machine on battery."""
    root = _copy(runs, "windows", tmp_path)
    _battery_trace(root, "0.000")
    result = run_check(root)
    assert result.verdict == "incomplete"
    assert [f.code for f in result.findings if f.severity == "error"] == ["B0901"]


def test_an_explicit_cpu_session_offered_as_the_battery_evidence(runs, tmp_path: Path) -> None:
    """A session told to use the CPU provider holds no GPU whatever the power source: it
    shows nothing of the discrete-GPU rung being skipped."""
    root = _copy(runs, "windows", tmp_path)
    (root / "power_state/battery.winml.json").write_bytes(
        bf.winml_record(
            "gpu",
            {"mode": "explicit", "policy": None, "requested_providers": ["CPUExecutionProvider"]},
            [bf.CPU_EP],
        )
    )
    br.rehash(root)
    result = run_check(root)
    assert result.verdict == "incomplete"
    (f,) = [f for f in result.findings if f.severity == "error"]
    assert f.code == "B0901" and f.missing_evidence
    assert "selection mode 'explicit'" in f.message


def test_an_idle_trace_recorded_before_the_trials(runs, tmp_path: Path) -> None:
    """The run's trials moved after the idle trace (its readings end at 12:00:17Z, the
    trials start at 12:00:30Z): the trace is of the machine idle before the session."""
    spec = bf.windows_spec(
        schedule=bf.sequential(datetime(2025, 8, 13, 12, 0, 30, tzinfo=UTC), gap_s=0.6)
    )
    root = br.build(tmp_path / "run", spec)
    result = run_check(root)
    assert result.verdict == "incomplete", [(f.code, f.message) for f in result.findings]
    (f,) = [f for f in result.findings if f.severity == "error"]
    assert f.code == "B0901"
    assert "before the last trial ended: it is not the idle session after the trials" in f.message
    assert power_state_checks(audit(root)[0])[IDLE].shows is None


def test_an_idle_trace_of_another_gpu(runs, tmp_path: Path) -> None:
    root = _copy(runs, "windows", tmp_path)
    _replace(
        root,
        "power_state/idle-hwinfo.csv",
        b"GPU [#1]: NVIDIA RTX A2000 8GB Laptop",
        b"GPU [#1]: NVIDIA GeForce RTX 4090",
    )
    errors = _errors(root)
    assert set(errors) == {"B0105", "B0901"}, errors
    assert "names the gpu NVIDIA GeForce RTX 4090" in errors["B0901"][0]


@pytest.mark.parametrize(
    ("last_w", "declared", "released"),
    [
        ("12.400", 15.0, False),  # the run's own threshold is not read
        ("0.400", None, True),  # the honest twin: at most the protocol's 1 W
    ],
)
def test_the_release_threshold_is_the_protocols(
    runs, tmp_path: Path, last_w: str, declared: float | None, released: bool
) -> None:
    root = _copy(runs, "windows", tmp_path)
    (root / "power_state/idle-hwinfo.csv").write_bytes(
        bf.hwinfo_gpu_released(bf.HWINFO_DELL.read_bytes(), 40, last_w)
    )
    if declared is not None:
        _manifest(root, lambda m: m["power_state_checks"][IDLE].update(released_below_w=declared))
    br.rehash(root)
    if released:
        _accepted(root)
        return
    errors = _errors(root)
    assert list(errors) == ["B0901"], errors
    assert (
        "still draws 12.4 W at the trace's last reading (released: at most 1 W)"
        in errors["B0901"][0]
    )


def test_a_battery_record_of_another_model(runs, tmp_path: Path) -> None:
    root = _copy(runs, "windows", tmp_path)
    (root / "power_state/battery.winml.json").write_bytes(
        bf.winml_record(
            "gpu",
            {"mode": "policy", "policy": "MAX_EFFICIENCY"},
            [bf.CPU_EP],
            model_sha256="0b5e" + "7" * 60,
        )
    )
    br.rehash(root)
    errors = _errors(root)
    assert set(errors) == {"B0106", "B0901"}, errors
    assert "it names the model 0b5e7777" in errors["B0901"][0]


# -- 3. counters and load --------------------------------------------------------------------


def _counter_decrease(root: Path, source: str, max_range: int) -> None:
    """cpu trial 2's SOURCE counter goes down half-way through its window, every record of
    it declaring MAX_RANGE; the harness's figures computed as if it wrapped there."""
    rel = "power/cpu/trial-2.jsonl"
    recs = [json.loads(x) for x in (root / rel).read_text(encoding="utf-8").splitlines()]
    mine = [r for r in recs if r["kind"] == "counter" and r["source"] == source]
    half = len(mine) // 2
    shift = max_range - mine[half]["value"]  # the half-way reading lands on the range
    for i, r in enumerate(mine):
        r["max_range"] = max_range
        r["value"] += shift - (max_range if i >= half else 0)  # ... and wraps to 0
    (root / rel).write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    br.rehash(root)


def test_an_nvml_counter_that_decreases_under_a_declared_wrap_range(runs, tmp_path: Path) -> None:
    """NVML's total energy is 64-bit millijoules (no wrap in practice): a decrease is a
    driver reload whatever range the records declare, and the window has no energy."""
    root = _copy(runs, "synthetic", tmp_path)
    _counter_decrease(root, "nvml", 2**32)
    errors = _errors(root)
    assert {"B0002", "B0304"} <= set(errors), errors
    assert (
        "a wrap at its documented range (1.84467e+19 mJ) would be more energy than any "
        "device draws" in errors["B0002"][0]
    )


def test_a_rapl_counter_that_wraps_at_its_drivers_range(runs, tmp_path: Path) -> None:
    """The honest twin: RAPL's range is the one its driver reports (the record's
    max_range): the same decrease is a wrap, and the window keeps its energy."""
    root = _copy(runs, "synthetic", tmp_path)
    before = run_check(root)
    _counter_decrease(root, "rapl", 262_143_328_850)
    after = run_check(root)
    assert after.verdict == before.verdict == "accepted", [
        (f.code, f.message) for f in after.findings
    ]


def _network(kbps: str):
    def edit(spec: br.Spec, w: br.Window, lines: list[bytes]) -> bool:
        if w.policy_id != "cpu":
            return False
        data = bf.hwinfo_set(b"\n".join(lines), "Current DL rate [KB/s]", kbps)
        lines[:] = data.split(b"\n")
        return True

    return edit


def test_network_traffic_in_every_baseline_window(runs, tmp_path: Path) -> None:
    root = br.build(tmp_path / "run", bf.windows_spec(trace=bf.hwinfo_edited(_network("41850.0"))))
    errors = _errors(root)
    assert list(errors) == ["B0205"] and len(errors["B0205"]) == 5, errors
    assert "41,850.0 KB/s of network traffic on average" in errors["B0205"][0]


def test_background_traffic_of_an_idle_machine(runs) -> None:
    """The honest twin: the real Dell log's own rates (at most 59.8 KB/s)."""
    _accepted(runs["windows"])


# -- 4. Windows ML compilation, nested profiles ---------------------------------------------


@pytest.mark.parametrize(("tier", "verdict"), [("deep", "rejected"), ("lite", "accepted")])
def test_a_windows_ml_record_without_aot_compilation(
    runs, tmp_path: Path, tier: str, verdict: str
) -> None:
    root = _copy(runs, "windows", tmp_path)
    (root / "placement/gpu.winml.json").write_bytes(
        bf.winml_record(
            "gpu",
            {
                "mode": "explicit",
                "policy": None,
                "requested_providers": ["NvTensorRTRTXExecutionProvider"],
            },
            [bf.GPU_EP, bf.CPU_EP],
            compilation={"aot": False, "succeeded": None},
        )
    )
    _manifest(root, lambda m: m.update(model_tier=tier))
    br.edit_csv(root, "policies.csv", lambda rows: [r.update(model_tier=tier) for r in rows])
    result = run_check(root)
    assert result.verdict == verdict, [(f.code, f.message) for f in result.findings]
    if tier == "deep":
        assert [f.code for f in result.findings if f.severity == "error"] == ["B0501"]


def test_a_profile_nested_deeper_than_any_parser(runs, tmp_path: Path) -> None:
    """One event of an ONNX Runtime profile nests 100,000 arrays: the file is at fault (a
    B0002 finding naming it and its line), never an internal error."""
    root = _copy(runs, "synthetic", tmp_path)
    events = br.ort_profile().decode().split("\n")
    events.insert(3, '{"cat": "Node", "name": "x", "args": ' + "[" * 100_000 + "]" * 100_000 + "},")
    (root / "placement/ort-cuda.ort-profile.json").write_text("\n".join(events), encoding="utf-8")
    br.rehash(root)
    findings = run_check(root).findings
    assert "B0000" not in {f.code for f in findings}
    (bad,) = [f for f in findings if f.code == "B0002"]
    assert bad.artifact == "placement/ort-cuda.ort-profile.json" and bad.location
    assert "nested too deeply" in bad.message


# -- 5. the user's own checkpoint ------------------------------------------------------------

TOKENIZER = b'{"version": "1.0", "model": {"type": "WordLevel", "vocab": {"[UNK]": 0}}}\n'


@pytest.mark.parametrize("revision_kept", [True, False])
def test_a_tokenizer_replaced_after_the_run(runs, tmp_path: Path, revision_kept: bool) -> None:
    """The run keeps model/tokenizer.json; its revision is that file's SHA-256 (the honest
    twin), or the one the run recorded before the file was replaced."""
    root = _copy(runs, "synthetic", tmp_path)
    (root / "model/tokenizer.json").write_bytes(TOKENIZER)
    if not revision_kept:
        digest = hashlib.sha256(TOKENIZER).hexdigest()
        _manifest(root, lambda m: m["revisions"].update(tokenizer="sha256:" + digest))
    br.rehash(root)
    errors = _errors(root)
    assert (list(errors) == ["B0108"]) == revision_kept, errors
    if revision_kept:
        assert errors["B0108"][0].startswith("the tokenizer revision is sha256:22222222")


def test_weights_replaced_after_the_run(runs, tmp_path: Path) -> None:
    """The weights the run measured replaced, the artifact's hash brought up to date, the
    model revision left: the revision names another file."""
    root = _copy(runs, "synthetic", tmp_path)
    (root / "model/weights.pt").write_bytes(b"fine-tuned later\n")
    digest = hashlib.sha256(b"fine-tuned later\n").hexdigest()
    _manifest(root, lambda m: m.update(artifact_sha256=digest))
    errors = _errors(root)
    assert "B0108" in errors, errors
    assert "the model revision is sha256:" in errors["B0108"][0]


@pytest.mark.parametrize(
    ("labels", "code"),
    [
        (br.CLASSES, None),
        (("negative", "neutral", "positive", "mixed"), "B0109"),
        (tuple(reversed(br.CLASSES)), None),  # the set is the run's; no replay order declared
    ],
)
def test_a_checkpoint_whose_labels_contradict_the_run(
    runs, tmp_path: Path, labels: tuple[str, ...], code: str | None
) -> None:
    root = _copy(runs, "synthetic", tmp_path)
    (root / "model/config.json").write_text(
        json.dumps({"id2label": {str(i): lab for i, lab in enumerate(labels)}}), encoding="utf-8"
    )
    br.rehash(root)
    errors = _errors(root)
    assert list(errors) == ([code] if code else []), errors


NVML_UUID = "GPU-5f1c0a2e-1b2c-4d3e-8f40-5a6b7c8d9e0f"


@pytest.mark.parametrize(
    ("recorded", "foreign"),
    [
        (NVML_UUID.removeprefix("GPU-"), False),  # as torch names it: the same board
        ("GPU-0d9e8f7a-6b5c-4d3e-8f40-112233445566", True),
    ],
)
def test_our_nvml_trace_names_its_board(runs, tmp_path: Path, recorded: str, foreign: bool) -> None:
    """Our runner's trace names the board NVML read (a `device` record); environment.json
    names the board the run used, its UUID as CUDA reports it (no `GPU-` prefix)."""
    root = _copy(runs, "synthetic", tmp_path)
    br.edit_jsonl(
        root,
        "power/torch-cuda/trial-2.jsonl",
        lambda recs: [
            {
                "kind": "device",
                "t": recs[0]["t"],
                "t_source": "host",
                "source": "nvml",
                "device": 0,
                "name": "NVIDIA H100 80GB HBM3",
                "uuid": NVML_UUID,
                "serial": None,
            },
            *recs,
        ],
    )
    _environment(root, lambda e: e["gpus"][0].update(uuid=recorded))
    errors = _errors(root)
    assert list(errors) == (["B0105"] if foreign else []), errors
