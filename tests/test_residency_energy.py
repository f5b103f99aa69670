"""The energy instruments and the window analysis of protocol B, on fakes: a RAPL counter
that wraps, an NVML counter that goes down (a reset), a missing counter, a sampling gap, a
window shorter than one counter update, and the real NVML and RAPL readers against a fake
pynvml and a fake powercap tree. Every record they write is a valid runner power record."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from energy_fakes import ConstantPower, FakePynvml, powercap_tree

import schemas
from auditor.readers import evidence_kinds
from auditor.readers.identity import Gpu, Identity
from runner.b.energy.base import Recorder, iso_utc
from runner.b.energy.nvml import NvmlInstrument
from runner.b.energy.rapl import RaplInstrument
from runner.b.energy.window import Minimums, analyse

T0 = datetime(2026, 11, 2, 9, 0, 0, tzinfo=UTC)
MINS = Minimums(
    sampling_interval_s=0.1, sample_periods=10, counter_updates=5, max_watts=100.0, min_readings=1
)
"""The arithmetic tests read a handful of counter values: the protocol's floor of 10 readings
per window (`Minimums.min_readings`) is tested on its own below."""


def at(seconds: float) -> str:
    return iso_utc(T0 + timedelta(seconds=seconds))


def marker(event: str, s: float) -> dict[str, Any]:
    return {"kind": "marker", "t": at(s), "t_source": "host", "event": event}


def rapl(s: float, value: int, max_range: int = 1_000_000_000) -> dict[str, Any]:
    return {
        "kind": "counter",
        "t": at(s),
        "source": "rapl",
        "domain": "package",
        "device": 0,
        "field": "/sys/class/powercap/intel-rapl:0/energy_uj",
        "value": value,
        "unit": "uJ",
        "max_range": max_range,
    }


def nvml(s: float, value: int) -> dict[str, Any]:
    return {
        "kind": "counter",
        "t": at(s),
        "source": "nvml",
        "domain": "gpu",
        "device": 0,
        "field": "nvmlDeviceGetTotalEnergyConsumption",
        "value": value,
        "unit": "mJ",
        "max_range": None,
    }


def sample(s: float, watts: float) -> dict[str, Any]:
    return {
        "kind": "sample",
        "t": at(s),
        "t_source": "nvml",
        "source": "nvml",
        "domain": "gpu",
        "device": 0,
        "field": "POWER_INSTANT",
        "watts": watts,
    }


def window(*inner: dict[str, Any], end: float = 2.0) -> list[dict[str, Any]]:
    records = [marker("window_start", 0.0), *inner, marker("window_end", end)]
    for r in records:
        assert schemas.validator("runner_power_record").is_valid(r), r
    return records


def test_rapl_wrap_is_added_back() -> None:
    # 10 W for 2 s = 20 J = 20e6 uJ on a counter that wraps at 1e9 uJ, starting near the top
    start = 1_000_000_000 - 5_000_000
    values = [(start + k * 2_000_000) % 1_000_000_000 for k in range(11)]
    res = analyse(window(*(rapl(0.2 * k, v) for k, v in enumerate(values))), MINS)
    assert res.status == "measured", res.reason
    assert res.energy_j == pytest.approx(20.0)
    assert res.average_power_w == pytest.approx(10.0)
    assert res.energy_source == "rapl"
    assert res.series[0].wraps == 1 and res.series[0].updates == 10


def test_nvml_decrease_is_a_reset_never_a_wrap() -> None:
    values = [5_000, 5_500, 6_000, 200, 700, 1_200, 1_700, 2_200]
    res = analyse(window(*(nvml(0.25 * k, v) for k, v in enumerate(values))), MINS)
    assert res.status == "not_measured" and res.energy_j is None
    assert "reset" in (res.reason or "")


def test_missing_counter_gives_no_figure() -> None:
    # one read inside the window only: no interval to count energy over
    res = analyse(window(rapl(1.0, 5_000)), MINS)
    assert res.status == "not_measured" and "missing counter" in (res.reason or "")
    # power samples without any energy counter are never turned into energy
    res = analyse(window(*(sample(0.1 * k, 60.0) for k in range(20))), MINS)
    assert res.status == "not_measured" and res.energy_j is None
    assert res.series[0].mean_watts == pytest.approx(60.0)
    # an NVML board with samples but whose counter is absent, beside a readable RAPL zone
    res = analyse(
        window(
            *(sample(0.1 * k, 60.0) for k in range(20)),
            *(rapl(0.2 * k, 1_000 + k * 2_000_000) for k in range(11)),
        ),
        MINS,
    )
    assert res.status == "not_measured" and "no energy counter" in (res.reason or "")


def test_sampling_gap_that_could_hide_a_wrap_gives_no_figure() -> None:
    # max_range 50 J at a 100 W ceiling: two reads 0.5 s apart can hide at most one wrap;
    # 1.4 s apart they cannot be trusted
    reads = [
        rapl(t, int(t * 10e6) % 50_000_000, max_range=50_000_000)
        for t in (0.0, 0.1, 0.2, 1.6, 1.7, 1.8, 1.9, 2.0)
    ]
    res = analyse(window(*reads), MINS)
    assert res.status == "not_measured"
    assert "cannot wrap twice" in (res.reason or "")
    assert res.gaps and "1.400 s" in res.gaps[0]


def test_sampling_gap_that_cannot_hide_a_wrap_is_reported_and_measured() -> None:
    times = (0.0, 0.1, 0.2, 0.3, 0.9, 1.0, 1.5, 2.0)
    reads = [rapl(t, int(t * 10e6)) for t in times] + [nvml(t, int(t * 50_000)) for t in times]
    samples = [sample(t, 50.0) for t in (0.05, 0.15, 1.5)]  # a 1.35 s hole in the samples
    res = analyse(window(*reads, *samples), MINS)
    assert res.status == "measured", res.reason
    assert res.energy_j == pytest.approx(20.0 + 100.0)
    assert res.energy_source == "nvml+rapl"
    assert any("POWER_INSTANT" in g for g in res.gaps)
    assert any("energy_uj" in g for g in res.gaps)  # 0.6 s > 3 sampling periods


def test_window_shorter_than_one_counter_update_is_below_resolution() -> None:
    # the counter updates every 100 ms and the whole sequence took 40 ms: one value
    res = analyse(window(nvml(0.0, 1_000), nvml(0.02, 1_000), nvml(0.04, 1_000), end=0.04), MINS)
    assert res.status == "below_resolution" and res.energy_j is None
    assert "shorter than the declared minimum" in (res.reason or "")
    assert "updated 0 time(s)" in (res.reason or "")
    # long enough in time, but the counter moved only twice: still no number
    res = analyse(window(*(nvml(0.5 * k, 1_000 + 3_000 * (k // 2)) for k in range(5))), MINS)
    assert res.status == "below_resolution" and "updated 2 time(s)" in (res.reason or "")


def test_fewer_than_the_protocols_ten_readings_is_below_resolution() -> None:
    """Eight counter reads over a window long and busy enough by every declared minimum:
    still below the protocol's floor of 10 samples per window (the auditor says the same)."""
    times = [0.15 * k for k in range(8)]
    reads = [rapl(t, int(t * 10e6)) for t in times]
    res = analyse(
        window(*reads),
        Minimums(sampling_interval_s=0.1, sample_periods=5, counter_updates=5, max_watts=100.0),
    )
    assert res.status == "below_resolution" and res.energy_j is None
    assert "read 8 time(s) inside the window, fewer than the protocol's 10" in (res.reason or "")
    more = [rapl(0.1 * k, int(0.1 * k * 10e6)) for k in range(11)]
    assert (
        analyse(
            window(*more),
            Minimums(sampling_interval_s=0.1, sample_periods=5, counter_updates=5, max_watts=100.0),
        ).status
        == "measured"
    )


def test_no_instrument_is_not_measured_with_every_reason() -> None:
    records = [
        {"kind": "unavailable", "t": at(0), "source": "nvml", "reason": "no NVML"},
        {"kind": "unavailable", "t": at(0), "source": "rapl", "reason": "no powercap"},
        marker("window_start", 0.0),
        marker("window_end", 1.0),
    ]
    res = analyse(records, MINS)
    assert res.status == "not_measured" and res.window_seconds == pytest.approx(1.0)
    assert res.reason == "nvml: no NVML; rapl: no powercap"


def test_rapl_reader_on_a_fake_powercap_tree_counts_a_real_wrap(tmp_path: Path) -> None:
    root = powercap_tree(
        tmp_path / "powercap",
        {
            "intel-rapl:0": ("package-0", 999_000, 1_000_000),
            "intel-rapl:0:0": ("core", 5, 1_000_000),  # a subzone: not a package
            "intel-rapl:1": ("psys", 10, 1_000_000),
        },
    )
    inst = RaplInstrument(root, max_watts=1.0)
    assert inst.open() is None
    assert [(z["domain"], z["device"]) for z in inst.zones] == [("package", 0), ("psys", 1)]
    assert inst.poll_interval(1.0) == pytest.approx(0.25)  # 1 J at 1 W, four polls per wrap
    rec = Recorder([inst], [], 0.05)
    rec.begin("window_start", "w")
    (root / "intel-rapl:0/energy_uj").write_text("1000\n")  # wrapped: +2,000 uJ
    rec.read_counters()
    (root / "intel-rapl:0/energy_uj").write_text("3000\n")
    rec.end("window_end", "w")
    for r in rec.records:
        schemas.validator("runner_power_record").validate(r)
    res = analyse(rec.records, Minimums(1e-6, 1, 1, max_watts=1.0, min_readings=1))
    assert res.status == "measured", res.reason
    package = next(s for s in res.series if s.domain == "package")
    assert package.wraps == 1 and package.energy_j == pytest.approx(0.004)
    assert res.energy_j == pytest.approx(0.004)  # psys is not added to the packages


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (lambda root: root / "absent", "does not exist"),
        (lambda root: powercap_tree(root, {"dtpm": ("dtpm", 1, 2)}), "no intel-rapl"),
    ],
)
def test_rapl_unavailable_says_why(tmp_path: Path, build, reason: str) -> None:
    assert reason in (RaplInstrument(build(tmp_path)).open() or "")


def test_rapl_zone_without_counter_is_unavailable(tmp_path: Path) -> None:
    root = powercap_tree(tmp_path, {"intel-rapl:0": ("package-0", 1, 2)})
    (root / "intel-rapl:0/energy_uj").unlink()
    assert "cannot be read" in (RaplInstrument(root).open() or "")


def test_nvml_reader_dates_samples_by_nvml_and_drops_repeats() -> None:
    lib = FakePynvml(watts=50.0, update_s=0.05, average_supported=False)
    inst = NvmlInstrument([(0, "abc")], lib=lib)
    assert inst.open() is None
    first = inst.samples()
    again = inst.samples()  # same NVML timestamp: nothing new
    time.sleep(0.06)
    later = inst.samples()
    assert len(first) == 1 and again == [] and len(later) == 1
    s = first[0]
    assert s["t_source"] == "nvml" and s["field"] == "POWER_INSTANT" and s["watts"] == 50.0
    assert [c["unit"] for c in inst.counters()] == ["mJ"]
    for r in [*first, *later, *inst.counters()]:
        schemas.validator("runner_power_record").validate(r)
    inst.close()
    assert lib.shutdown


def test_nvml_board_without_energy_counter_gives_samples_only() -> None:
    inst = NvmlInstrument([(0, None)], lib=FakePynvml(counter_supported=False))
    assert inst.open() is None
    assert inst.counters() == []
    assert "not readable" in inst.describe()["devices"][0]["energy_counter"]


def test_nvml_unavailable_says_why() -> None:
    assert "did not start" in (
        NvmlInstrument([(0, None)], lib=FakePynvml(init_error="no driver")).open() or ""
    )
    assert "no policy of this run uses a GPU" in (NvmlInstrument([], lib=FakePynvml()).open() or "")


def test_recorder_with_a_sampling_thread_measures_a_constant_power() -> None:
    # a 4 J range at 10 W wraps every 0.4 s; polls up to 0.38 s apart stay countable
    inst = ConstantPower(watts=10.0, max_range_uj=4_000_000, max_watts=10.5)
    nv = NvmlInstrument([(0, None)], lib=FakePynvml(watts=50.0, update_s=0.01))
    assert inst.open() is None and nv.open() is None
    rec = Recorder([inst, nv], [], 0.02)
    rec.start()
    rec.begin("window_start", "w")
    time.sleep(1.0)
    rec.end("window_end", "w")
    rec.stop()
    res = analyse(rec.records, Minimums(0.02, 10, 5, max_watts=10.5, min_readings=1))
    assert res.status == "measured", res.reason
    assert res.energy_source == "nvml+rapl"
    seconds = res.window_seconds or 0
    assert 0 < (res.energy_j or 0) <= 60.0 * seconds + 0.1  # the reads lie inside the window
    marks = [r["t"] for r in rec.records if r["kind"] == "marker"]
    for s in (s for s in res.series if s.kind == "counter"):
        reads = [
            datetime.fromisoformat(r["t"])
            for r in rec.records
            if r["kind"] == "counter" and r["source"] == s.source and marks[0] <= r["t"] <= marks[1]
        ]
        span = (reads[-1] - reads[0]).total_seconds()
        watts = 10.0 if s.source == "rapl" else 50.0
        assert s.energy_j == pytest.approx(watts * span, rel=0.05, abs=0.1), s.name
    rapl_series = next(s for s in res.series if s.source == "rapl")
    assert rapl_series.wraps >= 2
    starts = [r for r in rec.records if r["kind"] == "marker"]
    inside = [
        r
        for r in rec.records
        if r["kind"] == "counter" and starts[0]["t"] <= r["t"] <= starts[1]["t"]
    ]
    assert len(inside) >= 10


def test_the_trace_names_the_boards_nvml_reads() -> None:
    """Issue 31: our runner's trace names each board it reads (a `device` record: NVML's
    name, UUID, serial), and the auditor's reader exposes it as the trace's machine."""
    nv = NvmlInstrument([(0, None)], lib=FakePynvml(watts=50.0, update_s=0.01))
    assert nv.open() is None
    rec = Recorder([nv], [], 0.02)
    rec.begin("window_start", "w")
    rec.end("window_end", "w")
    (device,) = [r for r in rec.records if r["kind"] == "device"]
    assert device == {
        **device,
        "source": "nvml",
        "device": 0,
        "name": "Fake GPU",
        "uuid": "GPU-5f1c0a2e-0000-4000-8000-00000000cafe",
        "serial": "1650522003820",
    }
    for r in rec.records:
        schemas.validator("runner_power_record").validate(r)
    data = "".join(json.dumps(r) + "\n" for r in rec.records).encode()
    _, read = evidence_kinds.read(data, "trial-1.jsonl")
    assert read.meta["identity"] == Identity(
        gpus=(Gpu("Fake GPU", "GPU-5f1c0a2e-0000-4000-8000-00000000cafe", "1650522003820"),)
    )
