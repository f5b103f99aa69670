"""The timed trials (B2, B3, B6) and the idle measurements around them.

One trial of one policy: the announced batch-one warm-up (outside the window), then the
energy window: a device synchronize, the `window_start` marker and every energy counter, the
fixed sequence classified `repetitions` times in the same order (each classification timed
on its own, tokenization included), a synchronize, every counter and the `window_end`
marker. A sampling thread polls the instruments throughout. The answers are written after
the window (`outputs/<policy_id>/trial-<n>.jsonl`), the raw power records beside
(`power/<policy_id>/trial-<n>.jsonl`); nothing is computed from them here (that is the
read-back stage's job). An exception ends the trial where it happened; what was answered
before stays, and the trial is `failed`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from runner import artifacts
from runner.b import power_source
from runner.b.config import EnergyConfig
from runner.b.energy.base import (
    Instrument,
    Record,
    Recorder,
    now_utc,
    parse_time,
    unavailable,
)
from runner.b.energy.nvml import NvmlInstrument
from runner.b.energy.rapl import RaplInstrument
from runner.b.energy.window import Analysis, Minimums
from runner.b.policies import RunningPolicy
from runner.environment import Observed, power_mode
from runner.errors import RunnerError
from runner.records import incident_of

_encode = json.JSONEncoder(ensure_ascii=False).encode


class ExternalTrace(Protocol):
    """A power log another program writes (HWiNFO, powermetrics): the runner keeps the
    part of it that covers each window, in the tool's own format."""

    source: str
    extension: str

    @property
    def has_gpu(self) -> bool: ...

    def check(self) -> str: ...

    def capture(self, t0: datetime, t1: datetime, dest: Path) -> None: ...

    def analyse(self, path: Path, started: str, ended: str, mins: Minimums) -> Analysis: ...

    def last_gpu_watts(self, path: Path) -> float | None: ...

    def close(self) -> None: ...


@dataclass
class Instruments:
    """The run's energy instruments: the readable ones, and why the others are not."""

    usable: list[Instrument]
    missing: list[Record]
    external: ExternalTrace | None = None
    """A log another program writes, read for each window instead of polling."""

    @property
    def extension(self) -> str:
        return self.external.extension if self.external else ".jsonl"

    def recorder(self, interval: float) -> Recorder:
        return Recorder(self.usable, self.missing, interval)

    def describe(self) -> list[dict[str, Any]]:
        ext = (
            [
                {
                    "source": self.external.source,
                    "status": "available",
                    "log": str(getattr(self.external, "path", "")),
                }
            ]
            if self.external
            else []
        )
        return (
            ext
            + [{"status": "available", **i.describe()} for i in self.usable]
            + [
                {"source": r["source"], "status": "unavailable", "reason": r["reason"]}
                for r in self.missing
            ]
        )

    @property
    def reason(self) -> str:
        return "; ".join(f"{r['source']}: {r['reason']}" for r in self.missing)

    def close(self) -> None:
        for inst in self.usable:
            inst.close()
        if self.external is not None:
            self.external.close()


def open_instruments(candidates: list[Instrument]) -> Instruments:
    usable, missing = [], []
    for inst in candidates:
        reason = inst.open()
        if reason is None:
            usable.append(inst)
        else:
            missing.append(unavailable(inst.source, reason))
    return Instruments(usable, missing)


def external_log(energy: EnergyConfig, root: Path) -> ExternalTrace | None:
    """The log another program writes, when the config's instruments name one."""
    if "hwinfo" in energy.instruments:
        from runner.b.energy.hwinfo import HwinfoLog

        if energy.hwinfo_log is None:
            raise RunnerError(
                "energy.instruments names hwinfo but energy.hwinfo_log is not "
                "set: give the CSV file HWiNFO's sensor logging writes"
            )
        return HwinfoLog(
            energy.hwinfo_log, energy.minimums.sampling_interval_s, energy.log_timeout_s
        )
    if "powermetrics" in energy.instruments:
        from runner.b.energy.powermetrics import Powermetrics

        return Powermetrics(
            energy.powermetrics_log, energy.minimums.sampling_interval_s, energy.log_timeout_s, root
        )
    return None


def default_instruments(
    names: tuple[str, ...],
    gpus: list[tuple[int, str | None]],
    powercap_root: Path,
    max_watts: float,
) -> list[Instrument]:
    """The instruments the config names: NVML over the run's GPUs, RAPL under powercap."""
    out: list[Instrument] = []
    if "nvml" in names:
        out.append(NvmlInstrument(gpus))
    if "rapl" in names:
        out.append(RaplInstrument(powercap_root, max_watts))
    return out


@dataclass
class TrialRun:
    """What happened in one trial, as the trial loop saw it (the claims come later, from
    the files)."""

    policy_id: str
    trial_index: int
    order_position: int
    status: str
    started_at: str | None
    ended_at: str | None
    wall_seconds: float | None
    warmup: int
    power_source: Observed
    power_mode: Observed
    answers: int = 0
    error: str | None = None
    monotonic_seconds: float | None = None
    """The window on the monotonic clock, a cross-check of `wall_seconds` (which is the
    difference of the two marker times, so that the CSV, the trace and any recomputation
    agree to the microsecond)."""


def run_trial(
    policy: RunningPolicy,
    trial_index: int,
    position: int,
    ids: list[str],
    texts: list[str],
    repetitions: int,
    warmup: int,
    instruments: Instruments,
    interval: float,
    root: Path,
) -> TrialRun:
    pid = policy.spec.policy_id
    src, ext, raw = power_source.read()
    mode = power_mode()
    kept = root / f"power_source/{pid}/trial-{trial_index}{ext}"
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_bytes(raw)
    error = None
    done_warmup = 0
    try:
        for n in range(warmup):
            policy.classify_one(texts[n % len(texts)])
            done_warmup += 1
    except Exception as exc:  # the trial failed before its window
        error = f"warm-up: {incident_of(exc)['message']}"
    rec = instruments.recorder(interval)
    answers: list[tuple[str, str, float]] = []
    started = ended = None
    wall = monotonic = None
    if error is None:
        label = f"{pid} trial {trial_index}"
        rec.start()
        policy.synchronize()
        started = rec.begin("window_start", label)
        clock = time.perf_counter_ns
        try:
            for _ in range(repetitions):
                for i, text in zip(ids, texts, strict=True):
                    a = clock()
                    answer = policy.classify_one(text)
                    b = clock()
                    answers.append((i, answer, (b - a) / 1e6))
        except Exception as exc:  # kept as observed: the answers so far, the time so far
            error = incident_of(exc)["message"]
        finally:
            try:
                policy.synchronize()
            finally:
                ended = rec.end("window_end", label)
                rec.stop()
        wall = (parse_time(ended) - parse_time(started)).total_seconds()
        monotonic = rec.perf["window_end"] - rec.perf["window_start"]
    out = root / f"outputs/{pid}/trial-{trial_index}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(
            _encode({"id": i, "label": lab, "latency_ms": ms}) + "\n" for i, lab, ms in answers
        )
    if instruments.external is not None and started and ended:
        instruments.external.capture(
            parse_time(started),
            parse_time(ended),
            root / f"power/{pid}/trial-{trial_index}{instruments.extension}",
        )
    else:
        artifacts.write_jsonl(root / f"power/{pid}/trial-{trial_index}.jsonl", rec.records)
    return TrialRun(
        pid,
        trial_index,
        position,
        "failed" if error else "ok",
        started,
        ended,
        wall,
        done_warmup,
        src,
        mode,
        len(answers),
        error,
        monotonic,
    )


def measure_idle(
    instruments: Instruments, seconds: float, interval: float, path: Path, label: str
) -> tuple[str, str] | None:
    """Idle power for `seconds` (no work from this process), between idle markers; with no
    readable instrument only the reasons are written, and no time is spent. With an
    external log, its lines over the idle time are kept and the (start, end) returned."""
    if instruments.external is not None:
        start = now_utc()
        time.sleep(seconds)
        end = now_utc()
        instruments.external.capture(parse_time(start), parse_time(end), path)
        return start, end
    rec = instruments.recorder(interval)
    if instruments.usable and seconds > 0:
        rec.start()
        rec.begin("idle_start", label)
        time.sleep(seconds)
        rec.end("idle_end", label)
        rec.stop()
    artifacts.write_jsonl(path, rec.records)
    return None
