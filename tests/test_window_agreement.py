"""The runner's energy analysis of a window (`runner.b.energy.window.analyse`, what its energy
summaries say) and the auditor's (`facts.energy.window_energy`, what the audit recomputes from
the same trace through the `runner-jsonl` reader) are two implementations of one convention:
on the same traces they agree on whether the window has a figure, why not in the same terms
(no figure / below resolution), and on the figure itself.

The traces are the runner's own: counters read at the window's start and every sampling period
after it (the recorder reads them at its markers), an NVML GPU counter (mJ, no wrap) with its
power samples, and optionally a RAPL package counter (uJ) that may wrap at its `max_range`.
Steps of zero power leave a counter unchanged, which the declared `counter_updates` counts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import schemas
from auditor.protocols.b.facts.energy import Window, window_energy
from auditor.readers.power import runner_jsonl
from auditor.readers.timestamps import epoch_ns
from runner.b.energy.base import iso_utc
from runner.b.energy.window import Minimums, analyse

T0 = datetime(2026, 11, 2, 9, 0, 0, tzinfo=UTC)
RAPL_RANGE = 262_143_328_850
"""A real RAPL package zone's `max_energy_range_uj`."""

# what the runner's statuses are called in the auditor's terms
SAME = {"measured": {"measured"}, "below_resolution": {"below_resolution"}}


def _trace(
    period_ms: int, watts: list[float], rapl_watts: list[float] | None, rapl_start: int, tail: float
) -> tuple[list[dict[str, Any]], float]:
    """Markers at 0 and (len(watts) + TAIL) periods, counters (and NVML samples) at every
    whole period from 0; the window's length in seconds."""
    period = period_ms / 1000
    end = (len(watts) + tail) * period
    records: list[dict[str, Any]] = [
        {"kind": "marker", "t": iso_utc(T0), "t_source": "host", "event": "window_start"}
    ]
    nvml_mj, rapl_uj = 1_000_000, rapl_start
    for k in range(len(watts) + 1):
        t = iso_utc(T0 + timedelta(milliseconds=k * period_ms))
        records.append(
            {
                "kind": "counter",
                "t": t,
                "t_source": "host",
                "source": "nvml",
                "domain": "gpu",
                "device": 0,
                "field": "nvmlDeviceGetTotalEnergyConsumption",
                "value": nvml_mj,
                "unit": "mJ",
                "max_range": None,
            }
        )
        records.append(
            {
                "kind": "sample",
                "t": t,
                "t_source": "nvml",
                "source": "nvml",
                "domain": "gpu",
                "device": 0,
                "field": "POWER_INSTANT",
                "watts": watts[k - 1] if k else (watts[:1] or [0.0])[0],
            }
        )
        if rapl_watts is not None:
            records.append(
                {
                    "kind": "counter",
                    "t": t,
                    "t_source": "host",
                    "source": "rapl",
                    "domain": "package",
                    "device": 0,
                    "field": "/sys/class/powercap/intel-rapl:0/energy_uj",
                    "value": rapl_uj,
                    "unit": "uJ",
                    "max_range": RAPL_RANGE,
                }
            )
        if k < len(watts):
            nvml_mj += round(watts[k] * period_ms)  # W x ms = mJ
            if rapl_watts is not None:
                rapl_uj = (rapl_uj + round(rapl_watts[k] * period_ms * 1000)) % RAPL_RANGE
    records.append(
        {
            "kind": "marker",
            "t": iso_utc(T0 + timedelta(seconds=end)),
            "t_source": "host",
            "event": "window_end",
        }
    )
    validator = schemas.validator("runner_power_record")
    assert all(validator.is_valid(r) for r in records)
    return records, end


@st.composite
def windows(draw: st.DrawFn) -> tuple[list[dict[str, Any]], Minimums]:
    floor = schemas.convention("B", "min_samples_per_window")
    # as many windows near the floor of readings as anywhere else
    steps = draw(st.integers(0, 30) | st.integers(floor - 2, floor))
    power = st.one_of(st.just(0.0), st.floats(1.0, 700.0))
    watts = draw(st.lists(power, min_size=steps, max_size=steps))
    rapl = draw(st.one_of(st.none(), st.lists(power, min_size=steps, max_size=steps)))
    rapl_start = draw(st.integers(0, RAPL_RANGE - 1))
    # the window ends strictly between two periods: no comparison of equal floats decides
    tail = draw(st.floats(0.1, 0.9))
    period_ms = draw(st.integers(20, 500))
    records, _ = _trace(period_ms, watts, rapl, rapl_start, tail)
    mins = Minimums(
        sampling_interval_s=period_ms / 1000,
        sample_periods=draw(st.integers(1, 25) | st.integers(1, floor)),
        counter_updates=draw(st.just(0) | st.integers(0, 12)),
    )
    return records, mins


def _auditor(records: list[dict[str, Any]], mins: Minimums) -> Any:
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    read = runner_jsonl.read(data, name="power/p/trial-1.jsonl")
    assert read.value is not None and not read.errors, read.faults
    marks = {m["event"]: epoch_ns(m["t"]) for m in read.meta["markers"]}
    w = Window(marks["window_start"], marks["window_end"], policy=None, answers=1000)
    return window_energy(read.value, w, mins.to_json(), {"trace": "p", "tool": "runner"})


@settings(max_examples=150, deadline=None)
@given(windows())
def test_the_runner_and_the_auditor_agree_on_a_window(
    case: tuple[list[dict[str, Any]], Minimums],
) -> None:
    records, mins = case
    ours = analyse(records, mins)
    theirs = _auditor(records, mins)
    assert theirs.status in SAME.get(ours.status, set()) or (
        ours.status == "not_measured" and theirs.status not in ("measured", "below_resolution")
    ), (ours.status, ours.reason, theirs.status, theirs.reason)
    if ours.status == "measured":
        assert ours.energy_j is not None and theirs.energy_j is not None
        assert abs(ours.energy_j - theirs.energy_j) <= 1e-9 * max(1.0, abs(ours.energy_j))
        assert ours.energy_source == theirs.source


def test_the_floor_of_samples_per_window_is_one_convention() -> None:
    """Nine readings inside a window that is long enough in seconds: both say below
    resolution, each naming the protocol's floor (read from schemas/conventions.json)."""
    floor = schemas.convention("B", "min_samples_per_window")
    records, _ = _trace(100, [50.0] * (floor - 2), None, 0, 0.5)
    mins = Minimums(sampling_interval_s=0.1, sample_periods=1, counter_updates=0)
    ours, theirs = analyse(records, mins), _auditor(records, mins)
    assert (ours.status, theirs.status) == ("below_resolution", "below_resolution")
    assert f"protocol's {floor} samples per window" in (ours.reason or "")
    assert f"protocol's {floor} samples per window" in (theirs.reason or "")
    more, _ = _trace(100, [50.0] * (floor - 1), None, 0, 0.5)
    assert analyse(more, mins).status == _auditor(more, mins).status == "measured"
