"""A dishonest submitter's edits of clean protocol B runs (the manifest re-hashed, as the
submitter may) that the audit once accepted, each with the rule that now catches it; and
legitimate variations of a clean run that must stay accepted. Found by attacking the
auditor (placement of another model, overlapping windows, latencies copied between trials,
a trace whose time goes back)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import b_runs as br
import pytest

from auditor.engine import audit, run_check
from auditor.protocols.b.facts.trials import copied_latencies, trials


def _copy(runs, name: str, tmp_path: Path) -> Path:
    root = tmp_path / "run"
    shutil.copytree(runs[name], root)
    return root


def _errors(root: Path) -> dict[str, list[str]]:
    result = run_check(root)
    out: dict[str, list[str]] = {}
    for f in result.findings:
        if f.severity == "error":
            out.setdefault(f.code, []).append(f.message)
    return out


# -- lies ------------------------------------------------------------------------------------


def test_placement_record_of_another_model_is_not_this_policys(runs, tmp_path: Path) -> None:
    """ort-cuda's ORT record says it placed another model than the artifact it declares."""
    root = _copy(runs, "synthetic", tmp_path)
    doc = json.loads((root / "placement/ort-cuda.ort.json").read_text(encoding="utf-8"))
    doc["model_sha256"] = "f" * 64
    (root / "placement/ort-cuda.ort.json").write_text(json.dumps(doc), encoding="utf-8")
    br.rehash(root)
    errors = _errors(root)
    assert list(errors) == ["B0401"], errors
    assert "not its own" in errors["B0401"][0] and "ffffffffffffffff" in errors["B0401"][0]


def test_placement_record_of_another_policy_is_not_this_policys(runs, tmp_path: Path) -> None:
    """torch-cuda's placement file is the cpu policy's record (policy_id cpu)."""
    root = _copy(runs, "synthetic", tmp_path)
    shutil.copy(root / "placement/cpu.torch.json", root / "placement/torch-cuda.torch.json")
    br.rehash(root)
    errors = _errors(root)
    assert any("records policy 'cpu'" in m for m in errors.get("B0401", [])), errors


def test_the_record_of_the_declared_artifact_passes(runs, tmp_path: Path) -> None:
    """The same record naming the artifact the policy declares is its own."""
    root = _copy(runs, "synthetic", tmp_path)
    want = hashlib.sha256(b"synthetic onnx export\n").hexdigest()
    doc = json.loads((root / "placement/ort-cuda.ort.json").read_text(encoding="utf-8"))
    doc["model_sha256"] = want
    (root / "placement/ort-cuda.ort.json").write_text(json.dumps(doc), encoding="utf-8")
    br.rehash(root)
    assert run_check(root).verdict == "accepted"


def test_overlapping_windows_ran_at_the_same_time(tmp_path: Path) -> None:
    """Every trial starts a millisecond after the previous one: the windows overlap, the
    order as declared and every figure honest."""

    def together(spec: br.Spec, order: list[tuple[str, int]]) -> list[tuple[datetime, float]]:
        walls = {p.policy_id: p.wall_s for p in spec.policies}
        return [(br.T0 + timedelta(milliseconds=i), walls[pid]) for i, (pid, _) in enumerate(order)]

    root = br.build(tmp_path / "run", replace(br.synthetic_spec(), schedule=together))
    errors = _errors(root)
    assert list(errors) == ["B0302"], errors
    assert all("ran at the same time" in m for m in errors["B0302"])
    assert len(errors["B0302"]) == 14  # each of the 15 windows but the first


def test_latencies_copied_between_policies(runs, tmp_path: Path) -> None:
    """torch-cuda trial 1's answers are ort-cuda trial 1's (claims recomputed from them)."""
    root = _copy(runs, "synthetic", tmp_path)
    shutil.copy(root / "outputs/ort-cuda/trial-1.jsonl", root / "outputs/torch-cuda/trial-1.jsonl")
    lat = [
        json.loads(x)["latency_ms"]
        for x in (root / "outputs/torch-cuda/trial-1.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    lats = [
        json.loads(x)["latency_ms"]
        for k in range(1, 6)
        for x in (root / f"outputs/torch-cuda/trial-{k}.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    br.edit_csv(
        root,
        "trials.csv",
        lambda rows: br.row(rows, "torch-cuda", 1).update(
            p95_latency_ms=br.num(br.nearest_rank(lat))
        ),
    )
    br.edit_csv(
        root,
        "policies.csv",
        lambda rows: br.row(rows, "torch-cuda").update(
            p95_latency_ms=br.num(br.nearest_rank(lats))
        ),
    )
    errors = _errors(root)
    assert list(errors) == ["B0305"], errors
    assert "ort-cuda trial 1" in errors["B0305"][0]


def test_a_coarse_timer_may_repeat_its_latencies(runs, tmp_path: Path) -> None:
    """Latencies of a millisecond timer (a few distinct values) alike in two trials are not a
    copy: the rule needs `MIN_DISTINCT_COPIED` distinct values."""
    root = _copy(runs, "synthetic", tmp_path)
    for k in (1, 2):
        br.edit_jsonl(
            root,
            f"outputs/cpu/trial-{k}.jsonl",
            lambda lines: [{**x, "latency_ms": float(i % 2 + 1)} for i, x in enumerate(lines)],
        )
    view = audit(root)[0]
    assert copied_latencies(view) == []
    assert "B0305" not in _errors(root)


def _swap_times(text: str, a: str, b: str) -> str:
    return text.replace(a, "\0").replace(b, a).replace("\0", b)


def test_powermetrics_time_going_back_measures_no_window(runs, tmp_path: Path) -> None:
    """Two sample headers of a powermetrics log swapped in time (each sample's power the
    same, so the sum does not move): the trace was edited, its energy is no figure."""
    root = _copy(runs, "macos", tmp_path)
    p = root / "power/cpu/trial-1.txt"
    p.write_text(
        _swap_times(p.read_text(encoding="utf-8"), "10:00:03 2026", "10:00:04 2026"),
        encoding="utf-8",
    )
    br.rehash(root)
    result = run_check(root)
    assert {f.code for f in result.findings if f.severity == "error"} == {"B0304"}
    assert any("time goes back" in f.message for f in result.findings if f.code == "B0304")
    assert any(f.code == "B0002" and f.severity == "warning" for f in result.findings)


def test_runner_counter_read_back_in_time_measures_no_window(runs, tmp_path: Path) -> None:
    root = _copy(runs, "synthetic", tmp_path)

    def swap(recs: list[dict]) -> None:
        cs = [x for x in recs if x["kind"] == "counter" and x["source"] == "nvml"]
        cs[5]["t"], cs[9]["t"] = cs[9]["t"], cs[5]["t"]

    br.edit_jsonl(root, "power/cpu/trial-1.jsonl", swap)
    errors = _errors(root)
    assert "B0304" in errors and set(errors) <= {"B0304", "B0604"}, errors
    assert any("time goes back" in m for m in errors["B0304"])


def test_a_reading_at_the_time_of_the_previous_one_is_no_disorder(runs, tmp_path: Path) -> None:
    """An NVML power sample read twice within one update repeats its timestamp: a `repeat`
    warning, the energy (from the counters) still measured."""
    root = _copy(runs, "synthetic", tmp_path)

    def repeat(recs: list[dict]) -> list[dict]:
        i = next(i for i, x in enumerate(recs) if x["kind"] == "sample")
        return [*recs[: i + 1], {**recs[i], "watts": 45.5}, *recs[i + 1 :]]

    br.edit_jsonl(root, "power/torch-cuda/trial-2.jsonl", repeat)
    result = run_check(root)
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]


# -- legitimate variations ----------------------------------------------------------------------

Edit = Callable[[Path], None]


def _offset_times(root: Path) -> None:
    tz = timezone(timedelta(hours=1))

    def f(rows: list[dict[str, str]]) -> None:
        for x in rows:
            for c in ("started_at", "ended_at"):
                if x[c]:
                    x[c] = (
                        datetime.fromisoformat(x[c])
                        .astimezone(tz)
                        .isoformat(timespec="microseconds")
                    )

    br.edit_csv(root, "trials.csv", f)


def _crlf_hwinfo(root: Path) -> None:
    for p in (root / "power").rglob("*.csv"):
        p.write_bytes(p.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    br.rehash(root)


def _utf8_hwinfo(root: Path) -> None:
    for p in (root / "power").rglob("*.csv"):
        p.write_bytes(p.read_bytes().decode("cp1252").encode("utf-8"))
    br.rehash(root)


def _policy_left_out(root: Path) -> None:
    br.edit_json(
        root,
        "manifest.json",
        lambda m: m.setdefault("policies_left_out", []).append(
            {
                "policy_id": "ort-trt",
                "role": "accelerator",
                "runtime": "onnxruntime",
                "compute_units": "TensorrtExecutionProvider",
                "precision": "float32",
                "reason": "no TensorRT on this machine",
                "when": "available",
                "notes": "",
            }
        ),
        seal=False,
    )


def _utc_powermetrics(root: Path) -> None:
    for p in (root / "power").rglob("*.txt"):
        p.write_text(
            re.sub(
                r"\(([A-Z][a-z]{2} [A-Z][a-z]{2} +\d+) (\d\d):(\d\d:\d\d) (\d{4}) \+0100\)",
                lambda m: f"({m[1]} {int(m[2]) - 1:02d}:{m[3]} {m[4]} +0000)",
                p.read_text(encoding="utf-8"),
            ),
            encoding="utf-8",
        )
    br.rehash(root)


def _rows_by_time(root: Path) -> None:
    br.edit_csv(root, "trials.csv", lambda rows: rows.sort(key=lambda x: int(x["order_position"])))


LEGIT: dict[str, tuple[str, Edit]] = {
    "trial times written with a local UTC offset": ("macos", _offset_times),
    "HWiNFO logs with CRLF line ends": ("windows", _crlf_hwinfo),
    "HWiNFO logs re-encoded as UTF-8": ("windows", _utf8_hwinfo),
    "a policy left out, not available on the machine": ("synthetic", _policy_left_out),
    "powermetrics sample times in UTC": ("macos", _utc_powermetrics),
    "trials.csv rows in the order they ran": ("synthetic", _rows_by_time),
}


@pytest.mark.parametrize("what", sorted(LEGIT))
def test_legitimate_variations_stay_accepted(runs, tmp_path: Path, what: str) -> None:
    template, edit = LEGIT[what]
    root = _copy(runs, template, tmp_path)
    edit(root)
    result = run_check(root)
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]


def test_a_failed_trial_recorded_and_run_again_is_accepted(tmp_path: Path) -> None:
    """torch-cuda trial 3 failed (its row kept, no outputs); a sixth trial at the end gives
    the policy its five ok trials."""
    order = [*br.trial_order(br.synthetic_spec()), ("torch-cuda", 6)]
    root = br.build(
        tmp_path / "run",
        replace(br.synthetic_spec(), order=order, failed=frozenset({("torch-cuda", 3)})),
    )
    result = run_check(root)
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]


# -- energy counters against the same instrument's power samples (B0605) --------------------


def _trace_with(pid: str, edit: Callable[[list[dict]], None]) -> br.Trace:
    """Our runner's trace, policy PID's records edited by EDIT; the window's energy is then
    recomputed honestly from the edited counters, so every claim agrees with the trace."""

    def trace(spec: br.Spec, w: br.Window) -> tuple[str, bytes]:
        ext, data = br.runner_trace(spec, w)
        if w.policy_id != pid:
            return ext, data
        recs = [json.loads(x) for x in data.decode().splitlines()]
        edit(recs)
        scale = {"mJ": 1e-3, "uJ": 1e-6}
        energy = 0.0
        for src in {r["source"] for r in recs if r["kind"] == "counter"}:
            mine = [r for r in recs if r["kind"] == "counter" and r["source"] == src]
            energy += (mine[-1]["value"] - mine[0]["value"]) * scale[mine[0]["unit"]]
        w.energy_j = energy
        return ext, "".join(json.dumps(r) + "\n" for r in recs).encode()

    return trace


def _scale_counter(source: str, factor: float) -> Callable[[list[dict]], None]:
    def edit(recs: list[dict]) -> None:
        for r in recs:
            if r["kind"] == "counter" and r["source"] == source:
                r["value"] = round(r["value"] * factor)

    return edit


def _rapl_samples(watts: float) -> Callable[[list[dict]], None]:
    """A RAPL power sample beside each RAPL counter reading (the schema allows them; our
    runner writes none)."""

    def edit(recs: list[dict]) -> None:
        out = []
        for r in recs:
            out.append(r)
            if r["kind"] == "counter" and r["source"] == "rapl":
                out.append(
                    {
                        "kind": "sample",
                        "t": r["t"],
                        "t_source": "host",
                        "source": "rapl",
                        "domain": "package",
                        "device": 0,
                        "field": "intel-rapl:0/power",
                        "watts": watts,
                    }
                )
        recs[:] = out

    return edit


def _both(*edits: Callable[[list[dict]], None]) -> Callable[[list[dict]], None]:
    def edit(recs: list[dict]) -> None:
        for e in edits:
            e(recs)

    return edit


def _run_with(tmp_path: Path, pid: str, edit: Callable[[list[dict]], None]) -> Path:
    return br.build(tmp_path / "run", replace(br.synthetic_spec(), trace=_trace_with(pid, edit)))


def test_baseline_nvml_counter_doubled_against_its_samples(tmp_path: Path) -> None:
    """The CPU baseline's NVML energy counter multiplied by 2 (every claim recomputed from
    it, so the accelerators look cheaper); its POWER_INSTANT samples in the same trace still
    say 30 W."""
    root = _run_with(tmp_path, "cpu", _scale_counter("nvml", 2.0))
    errors = _errors(root)
    assert list(errors) == ["B0605"], errors
    assert len(errors["B0605"]) == 5  # each of the baseline's five trials
    assert all(
        "60 W" in m and "30 W" in m and "2.00 x" in m and "not the measurement" in m
        for m in errors["B0605"]
    ), errors
    assert run_check(root).verdict == "rejected"


def test_rapl_counter_doubled_against_rapl_samples(tmp_path: Path) -> None:
    """The same lie on RAPL, in a trace that writes RAPL power samples beside the counter."""
    root = _run_with(tmp_path, "cpu", _both(_rapl_samples(40.0), _scale_counter("rapl", 2.0)))
    errors = _errors(root)
    assert list(errors) == ["B0605"], errors
    assert all("package 0 counter (rapl:" in m and "80 W" in m for m in errors["B0605"])


def test_counter_off_within_the_grey_band_is_a_warning(tmp_path: Path) -> None:
    """A counter 25 % above its samples (30 W): beyond a reading's accuracy (5 % + 5 W), not
    clearly another figure: a warning naming both, the run accepted."""
    root = _run_with(tmp_path, "cpu", _scale_counter("nvml", 1.25))
    result = run_check(root)
    own = [f for f in result.findings if f.code == "B0605"]
    assert own and {f.severity for f in own} == {"warning"}, own
    assert "37.5 W" in own[0].message and "30 W" in own[0].message
    assert own[0].artifact == "power/cpu/trial-1.jsonl"
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]


def _noisy(recs: list[dict]) -> None:
    """NVML instant readings +-20 % around the draw, alternately (the counter unchanged)."""
    samples = [r for r in recs if r["kind"] == "sample"]
    for i, r in enumerate(samples):
        r["watts"] = round(r["watts"] * (1.2 if i % 2 else 0.8), 3)


def _lagging_average(recs: list[dict]) -> None:
    """The samples are POWER_AVERAGE, a 1 s rolling average that starts from a 10 W idle
    (a few hundredths of a watt from one trial to the next, as a live idle is) before the
    window: it lags the load for the window's first second."""
    samples = [r for r in recs if r["kind"] == "sample"]
    t0 = datetime.fromisoformat(samples[0]["t"])
    ms = t0.minute * 60_000 + t0.second * 1000 + t0.microsecond // 1000
    idle = 10.0 + 0.001 * (ms % 97)
    for r in samples:
        age = (datetime.fromisoformat(r["t"]) - t0).total_seconds()
        r["field"] = "POWER_AVERAGE"
        r["watts"] = round(idle + (r["watts"] - idle) * min(1.0, age / 1.0), 3)


def _sparse_samples(recs: list[dict]) -> None:
    """Every fourth NVML sample kept (0.2 s apart, more than 3 x the declared 0.05 s)."""
    samples = [r for r in recs if r["kind"] == "sample"]
    drop = {id(r) for i, r in enumerate(samples) if i % 4}
    recs[:] = [r for r in recs if id(r) not in drop]


COUNTER_VS_SAMPLES_LEGIT = {
    "instant readings +-20 % around the counter's power": _noisy,
    "a rolling average lagging the load at the window's start": _lagging_average,
}


@pytest.mark.parametrize("what", sorted(COUNTER_VS_SAMPLES_LEGIT))
def test_samples_that_follow_the_counter_loosely_pass(tmp_path: Path, what: str) -> None:
    root = _run_with(tmp_path, "cpu", COUNTER_VS_SAMPLES_LEGIT[what])
    result = run_check(root)
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]
    assert not [f for f in result.findings if f.code == "B0605"]
    view = audit(root)[0]
    checks = [x for t in trials(view) if t.policy_id == "cpu" for x in t.energy.cross_checks]
    assert len(checks) == 5 and {x.status for x in checks} == {"agrees"}


def test_sparse_samples_judge_no_counter(tmp_path: Path) -> None:
    """Samples further apart than the declared gap factor allows are no evidence either
    way: even a doubled counter beside them is not judged by them."""
    root = _run_with(tmp_path, "cpu", _both(_sparse_samples, _scale_counter("nvml", 2.0)))
    view = audit(root)[0]
    checks = [x for t in trials(view) if t.policy_id == "cpu" for x in t.energy.cross_checks]
    assert checks and {x.status for x in checks} == {"sparse"}
    assert "between two samples" in (checks[0].reason or "")
    assert "B0605" not in _errors(root)


# -- the power source of the snapshot, of the trials, of the two sides of B7 -------------------


def _power_source(policy: str | None, value: str, only: int | None = None) -> Edit:
    """trials.csv: POLICY's rows (every row when None; only trial ONLY when given) record
    VALUE as their power source."""

    def edit(root: Path) -> None:
        br.edit_csv(
            root,
            "trials.csv",
            lambda rows: [
                r.update(power_source=value)
                for r in rows
                if (policy is None or r["policy_id"] == policy)
                and (only is None or r["trial_index"] == str(only))
            ],
        )

    return edit


def _findings(root: Path, code: str) -> list:
    return [f for f in run_check(root).findings if f.code == code]


@pytest.mark.parametrize("only", [None, 3])
def test_baseline_on_battery_accelerators_on_ac(runs, tmp_path: Path, only: int | None) -> None:
    """The CPU baseline's trials (all, or one of them) ran on battery, the accelerators' on
    AC: B7's comparison is across power sources, never an accept; the snapshot (ac) differs
    from those trials: a warning."""
    root = _copy(runs, "synthetic", tmp_path)
    _power_source("cpu", "battery", only)(root)
    result = run_check(root)
    errors = {f.code for f in result.findings if f.severity == "error"}
    # B1003: policies.csv still claims the accelerators accepted
    assert errors == {"B0701", "B1003"}, [(f.code, f.message) for f in result.findings]
    b7 = [f for f in result.findings if f.code == "B0701"]
    assert len(b7) == 2 and all("not the same power source" in f.message for f in b7)
    assert result.verdict == "rejected"
    warn = [f for f in result.findings if f.code == "B0101"]
    assert [f.severity for f in warn] == ["warning"]
    assert "environment.json /power_source/value says 'ac'" in warn[0].message
    assert "trials.csv" in warn[0].message and "'battery'" in warn[0].message
    assert warn[0].artifact == "trials.csv" and warn[0].row is not None


def test_snapshot_on_battery_trials_on_ac_is_a_warning(runs, tmp_path: Path) -> None:
    """environment.json was taken on battery, every trial then ran on AC (plugged in after
    the snapshot): a warning naming both values and files, the run accepted."""
    root = _copy(runs, "synthetic", tmp_path)
    br.edit_json(root, "environment.json", lambda e: e["power_source"].update(value="battery"))
    result = run_check(root)
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]
    warn = [f for f in result.findings if f.code == "B0101"]
    assert len(warn) == 1 and warn[0].severity == "warning"
    assert "says 'battery'" in warn[0].message and "'ac'" in warn[0].message
    assert "15 ok trial(s)" in warn[0].message
    assert warn[0].evidence["environment_pointer"] == "/power_source/value"


def test_power_mode_other_than_the_snapshot_is_a_warning(runs, tmp_path: Path) -> None:
    root = _copy(runs, "synthetic", tmp_path)
    br.edit_csv(root, "trials.csv", lambda rows: [r.update(power_mode="balanced") for r in rows])
    result = run_check(root)
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]
    warn = [f for f in result.findings if f.code == "B0101"]
    assert len(warn) == 1 and "power mode 'balanced'" in warn[0].message
    assert "/power_mode/value says 'performance'" in warn[0].message


def test_every_trial_on_battery_compares_on_one_power_source(runs, tmp_path: Path) -> None:
    """Every trial on battery, the snapshot too: one power source for both sides of B7,
    nothing to say."""
    root = _copy(runs, "synthetic", tmp_path)
    _power_source(None, "battery")(root)
    br.edit_json(root, "environment.json", lambda e: e["power_source"].update(value="battery"))
    result = run_check(root)
    assert result.verdict == "accepted" and result.findings == (), result.findings
