"""Lies against protocol B's energy evidence, each with its honest twin: readings no
instrument gives, windows that are not the inference region, a sequence that is not the
protocol's, copied measurements, contamination the run's own files show, and policies
compared across power modes. Every edited run is re-sealed and its claims recomputed from
the edited files, as a dishonest submitter would."""

from __future__ import annotations

import csv
import itertools
import shutil
from pathlib import Path

import b_runs as br
import pytest
from b_fixtures import FIXTURES

from auditor.engine import run_check
from auditor.protocols.b.facts.consistency import inconsistencies_of
from auditor.readers import evidence_kinds


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


def _hwinfo_column(root: Path, rel: str, column: str, value: str) -> None:
    """Set COLUMN of every data row of the HWiNFO log REL to VALUE (bytes as HWiNFO writes)."""
    path = root / rel
    lines = path.read_bytes().split(b"\n")
    header = next(csv.reader([lines[0].decode("cp1252")]))  # names may hold commas
    k = header.index(column)
    for i, line in enumerate(lines[1:], start=1):
        cells = line.split(b",")  # data rows are numbers: no quoting
        if len(cells) == len(header) and cells[0][:1].isdigit():
            cells[k] = value.encode()
            lines[i] = b",".join(cells)
    path.write_bytes(b"\n".join(lines))


# -- readings no instrument gives (B0608) -----------------------------------------------------

POWER_FIXTURES = sorted(
    p
    for p in FIXTURES.rglob("*")
    if p.is_file()
    and p.suffix in (".txt", ".csv", ".plist", ".xml", ".log", ".jsonl")
    and "coreml" not in p.parts
)


@pytest.mark.parametrize("path", POWER_FIXTURES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_real_power_logs_hold_no_impossible_reading(path: Path) -> None:
    """The honest twin of B0608: every real tool's log among the fixtures (combined power
    equal to its parts within 1 mW, packages above their cores) holds none."""
    reader, read = evidence_kinds.read(path.read_bytes(), path.name, local_utc_offset="+00:00")
    if reader is None or reader.family != "power" or read.value is None:
        pytest.skip("not a power log a reader takes")
    assert inconsistencies_of(read.value) == ()


def test_a_package_below_its_own_cores_is_not_a_measurement(runs, tmp_path: Path) -> None:
    """The Windows run's cpu trial 1: CPU Package Power set to 2 W in every sample, below
    its IA Cores Power (6 to 28 W), which makes the CPU baseline look cheap to run."""
    root = _copy(runs, "windows", tmp_path)
    _hwinfo_column(root, "power/cpu/trial-1.csv", "CPU Package Power [W]", "2.000")
    br.rehash(root)
    errors = _errors(root)
    assert "B0608" in errors, errors
    assert any("below its cores" in m for m in errors["B0608"]), errors["B0608"]
    assert run_check(runs["windows"]).verdict == "accepted"  # the twin, as HWiNFO wrote it


# -- windows that are not the inference region (B0606), the protocol's sequence (B0202) ------


def _fill(share: float):
    def latencies(trial: int, n: int) -> list[float]:
        return [round(1.1 * share * (1 + 1e-6 * ((i * 31 + trial * 17) % 97)), 9) for i in range(n)]

    return latencies


def test_idle_time_padded_onto_the_accelerators_windows(tmp_path: Path) -> None:
    """ort-cuda's 1.1 s windows hold 0.66 s of inference: 0.44 s of idle (which lowers its
    average power against the baseline) beside every trial's latencies."""
    spec = br.with_policy(br.synthetic_spec(), "ort-cuda", latency_fn=_fill(0.6))
    errors = _errors(br.build(tmp_path / "run", spec))
    assert list(errors) == ["B0606"], errors
    assert len(errors["B0606"]) == 5 and "is not inference" in errors["B0606"][0]


def test_a_tight_inference_loop_is_the_region(tmp_path: Path) -> None:
    """The twin: the same windows with 95 % of each taken by the latencies."""
    spec = br.with_policy(br.synthetic_spec(), "ort-cuda", latency_fn=_fill(0.95))
    assert run_check(br.build(tmp_path / "run", spec)).verdict == "accepted"


def test_fewer_prompts_than_the_protocols_sequence_is_an_error(tmp_path: Path) -> None:
    """A run of 500 prompts, declared as such and consistent everywhere: not the protocol's
    fixed 1,000-prompt sequence (B2), an error."""
    result = run_check(br.build(tmp_path / "run", br.synthetic_spec(prompts=500)))
    b0202 = [f for f in result.findings if f.code == "B0202"]
    assert b0202 and all(f.severity == "error" for f in b0202)
    assert result.verdict == "rejected"


# -- contamination the run's own files show (B0205) ---------------------------------------


def test_the_baseline_on_battery_while_its_rows_say_ac(runs, tmp_path: Path) -> None:
    """The Windows run's cpu trial 2: HWiNFO's battery Charge Rate reads -18 W through the
    window (the battery discharging: unplugged), while trials.csv says `ac`."""
    root = _copy(runs, "windows", tmp_path)
    _hwinfo_column(root, "power/cpu/trial-2.csv", "Charge Rate [W]", "-18.000")
    br.rehash(root)
    errors = _errors(root)
    assert list(errors) == ["B0205"], errors
    assert "cpu trial 2" in errors["B0205"][0] and "battery" in errors["B0205"][0]


def test_a_charging_battery_is_on_ac(runs, tmp_path: Path) -> None:
    """The twin: the battery charging at 12 W during the windows is the charger's doing."""
    root = _copy(runs, "windows", tmp_path)
    _hwinfo_column(root, "power/cpu/trial-2.csv", "Charge Rate [W]", "12.000")
    br.rehash(root)
    assert "B0205" not in _errors(root)


# -- policies compared across power modes (B0701) -------------------------------------------


def test_policies_measured_in_different_power_modes(tmp_path: Path) -> None:
    """The accelerators' trials in `performance` mode, the baseline's in `balanced` (every
    row and claim as measured): B7 compares on the same power mode, so this is invalid."""

    def mode(spec: br.Spec, w: br.Window) -> None:
        w.power_mode = "balanced" if w.policy_id == "cpu" else "performance"

    result = run_check(br.build(tmp_path / "run", br.synthetic_spec(window_hook=mode)))
    b0701 = [f for f in result.findings if f.code == "B0701"]
    assert b0701 and all("not the same power mode" in f.message for f in b0701), [
        (f.code, f.message) for f in result.findings
    ]
    assert result.verdict == "rejected"


# -- the false alarm of real powermetrics pacing ----------------------------------------------


def test_powermetrics_pacing_of_1012_ms_is_no_gap() -> None:
    """powermetrics at `-i 1000` measures about 1,012 ms per sample and prints its header
    times to the second, so now and then two headers are 2 s apart with no sample missing:
    the samples' times come from the measured intervals, so no window over them has a gap
    (B0602) and the energy is the sum of the samples."""
    from datetime import UTC, datetime, timedelta

    from auditor.protocols.b.facts.crosscheck import series

    t0 = datetime(2026, 3, 2, 9, 0, 0, 400_000, tzinfo=UTC)
    out, t, seconds = ["Machine model: Mac15,6", "OS version: 23E224", ""], t0, []
    for _ in range(100):
        t += timedelta(milliseconds=1012.07)
        seconds.append(int(t.timestamp()))
        out += [
            f"*** Sampled system activity ({t.strftime('%a %b %e %H:%M:%S %Y')} +0000) "
            "(1012.07ms elapsed) ***",
            "",
            "CPU Power: 1200 mW",
            "GPU Power: 300 mW",
            "ANE Power: 500 mW",
            "Combined Power (CPU + GPU + ANE): 2000 mW",
            "",
        ]
    data = ("\n".join(out) + "\n").encode()
    _, read = evidence_kinds.read(data, "trace.txt")
    frame = read.value.filter(read.value["domain"] == "combined")
    ends = frame.sort("line")["end"].to_list()
    steps = [(b - a).total_seconds() for a, b in itertools.pairwise(ends)]
    assert 2 in {b - a for a, b in itertools.pairwise(seconds)}  # headers 2 s apart
    assert max(steps) < 1.1, max(steps)  # the samples never are
    origin = t0 + timedelta(seconds=10)
    rel = frame.with_columns(
        s=(frame["start"] - origin).dt.total_microseconds() / 1e6,
        e=(frame["end"] - origin).dt.total_microseconds() / 1e6,
    )
    s = series(rel, "combined", None, rel["source"][0], "interval", 0.0, 60.0, 1.0)
    assert s.covered and s.max_interval_s is not None and s.max_interval_s < 1.5
    assert s.energy_j == pytest.approx(2.0 * 60.0, rel=1e-3)
