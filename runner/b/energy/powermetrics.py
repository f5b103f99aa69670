"""macOS `powermetrics` as the runner's power instrument (seed B: "Sample the
1,000-inference region with sudo powermetrics ... at one-second intervals").

The runner starts `powermetrics --samplers cpu_power,gpu_power,ane_power -i <ms> -o FILE`
itself (it needs root: without it the run is refused before the first trial, saying how to
allow it), or reads a capture the user started (`energy.powermetrics_log`, `runner residency
--powermetrics-log FILE`). Before the first trial the capture must hold samples with a CPU
power line at the declared interval. For each trial (and idle measurement) the runner waits
until a sample ends after the window, then keeps the capture's preamble (machine model, OS
version) and every sample block around the window, byte for byte, as
`power/<policy_id>/trial-<n>.txt`.

Times, by the auditor's reading of the text format (auditor/readers/power/powermetrics_text
.py): a header's time is cut to the second, so a sample's end is the run's anchor plus the
measured `ms elapsed` summed, the anchor being the earliest for which every header reads its
sample's end cut to the second. Energy: each sample's watts over its measured interval,
pro rata at the window's edges; `Combined Power` (Apple silicon: CPU, GPU and ANE), else
`Package Power`, else the CPU, GPU and ANE lines summed.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from runner.b.energy.window import Analysis, Minimums, Series, short_window
from runner.errors import RunnerError

SOURCE = "powermetrics"
SAMPLERS = "cpu_power,gpu_power,ane_power"
_HEADER = re.compile(rb"^\*\*\* Sampled system activity \((.+?)\) \(([\d.]+)\s*ms elapsed\)")
_POWER = re.compile(
    rb"^(Combined Power \(CPU \+ GPU \+ ANE\)|Package Power|CPU Power|GPU Power|"
    rb"ANE Power): ([\d.]+) (mW|W)\s*$"
)
HOSTS = ("Combined Power (CPU + GPU + ANE)", "Package Power")
PARTS = ("CPU Power", "GPU Power", "ANE Power")


@dataclass
class Sample:
    header: datetime
    interval_s: float
    block: bytes
    watts: dict[str, float]
    end: datetime | None = None


def _split(data: bytes) -> tuple[bytes, list[Sample]]:
    """The preamble and every complete `Sampled` block (the last is complete once the next
    header has begun)."""
    lines = data.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith(b"*** Sampled system")]
    if not starts:
        return data, []
    samples = []
    for a, b in itertools.pairwise(starts):
        m = _HEADER.match(lines[a])
        if m is None:
            continue
        try:
            header = datetime.strptime(m.group(1).decode(), "%a %b %d %H:%M:%S %Y %z")
        except ValueError:
            continue
        watts: dict[str, float] = {}
        for line in lines[a + 1 : b]:
            p = _POWER.match(line)
            if p:
                scale = 1e-3 if p.group(3) == b"mW" else 1.0
                watts.setdefault(p.group(1).decode(), float(p.group(2)) * scale)
        samples.append(Sample(header, float(m.group(2)) / 1000, b"".join(lines[a:b]), watts))
    return b"".join(lines[: starts[0]]), samples


def anchor(samples: list[Sample]) -> None:
    """Each sample's end (module docstring), run by run, as the auditor's reader dates it."""
    run: list[Sample] = []
    base: datetime | None = None
    done = lo = hi = 0.0

    def close() -> None:
        elapsed = 0.0
        for s in run:
            elapsed += s.interval_s
            s.end = base + timedelta(seconds=lo + elapsed) if base else None

    for s in samples:
        step = s.interval_s
        if run and base is not None:
            h = (s.header - base).total_seconds()
            new_lo, new_hi = max(lo, h - done - step), min(hi, h + 1 - done - step)
            if new_lo < new_hi:
                run.append(s)
                done, lo, hi = done + step, new_lo, new_hi
                continue
            close()
        run, base, done = [s], s.header, step
        lo, hi = -step, 1 - step
    close()


class Powermetrics:
    """powermetrics' text capture: started here as root, or the user's own file."""

    source = SOURCE
    extension = ".txt"
    has_gpu = False
    """Apple silicon's GPU is integrated: no discrete GPU to release (B9)."""

    def __init__(self, log: Path | None, interval_s: float, timeout_s: float, root: Path) -> None:
        self.given = log
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.path = log or Path()

    def _start(self) -> None:
        exe = shutil.which("powermetrics")
        if exe is None:
            raise RunnerError(
                "powermetrics is not on PATH: it is macOS's own tool "
                "(/usr/bin/powermetrics); on another OS use another instrument"
            )
        if hasattr(os, "geteuid") and os.geteuid() != 0:
            raise RunnerError(
                "powermetrics needs root. Either run the runner as root (sudo -E runner "
                "residency ...), or start the capture yourself before the run: sudo "
                f"powermetrics --samplers {SAMPLERS} -i {int(self.interval_s * 1000)} -o "
                "/tmp/powermetrics.txt, and pass it with --powermetrics-log "
                "/tmp/powermetrics.txt (energy.powermetrics_log)"
            )
        self._tmp = tempfile.TemporaryDirectory(prefix="powermetrics-")
        self.path = Path(self._tmp.name) / "powermetrics.txt"
        self.process = subprocess.Popen(
            [
                exe,
                "--samplers",
                SAMPLERS,
                "-i",
                str(round(self.interval_s * 1000)),
                "-o",
                str(self.path),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def _read(self) -> tuple[bytes, list[Sample]]:
        data = self.path.read_bytes() if self.path.is_file() else b""
        preamble, samples = _split(data)
        anchor(samples)
        return preamble, samples

    def check(self) -> str:
        """Start the capture (or find the user's) and refuse one that cannot measure."""
        if self.given is None:
            self._start()
        deadline = time.monotonic() + self.timeout_s + 4 * self.interval_s
        samples: list[Sample] = []
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                err = (
                    (self.process.stderr.read() if self.process.stderr else b"")
                    .decode(errors="replace")
                    .strip()
                )
                raise RunnerError(
                    f"powermetrics exited with status {self.process.returncode}"
                    + (f": {err}" if err else "")
                )
            _, samples = self._read()
            if len(samples) >= 3:
                break
            time.sleep(min(self.interval_s, 0.25))
        if len(samples) < 3:
            raise RunnerError(
                f"{self.path}: fewer than three powermetrics samples after "
                f"{self.timeout_s:g} s: is the capture running?"
            )
        last = samples[-1]
        if not (set(last.watts) & {*HOSTS, "CPU Power"}):
            raise RunnerError(
                f"{self.path}: the samples have no CPU or package power line: "
                f"run powermetrics with --samplers {SAMPLERS}"
            )
        if not 0.5 * self.interval_s <= last.interval_s <= 1.5 * self.interval_s:
            raise RunnerError(
                f"{self.path}: powermetrics samples every "
                f"{last.interval_s:.3f} s, the run declares "
                f"energy.sampling_interval_s = {self.interval_s:g}: use -i "
                f"{int(self.interval_s * 1000)}"
            )
        return (
            f"powermetrics: {self.path} every {last.interval_s:.3f} s, "
            f"{', '.join(sorted(last.watts))}"
        )

    def capture(self, t0: datetime, t1: datetime, dest: Path) -> None:
        deadline = time.monotonic() + self.timeout_s + 4 * self.interval_s
        preamble, samples = self._read()
        margin = timedelta(seconds=1.5 + self.interval_s)
        while not samples or samples[-1].end is None or samples[-1].end <= t1 + margin:
            if time.monotonic() > deadline:
                break
            time.sleep(min(self.interval_s / 2, 0.25))
            preamble, samples = self._read()
        kept = [
            s
            for s in samples
            if s.end is not None
            and t0 - margin <= s.end
            and s.end - timedelta(seconds=s.interval_s) <= t1 + margin
        ]
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(preamble + b"".join(s.block for s in kept))

    def last_gpu_watts(self, path: Path) -> float | None:
        _, samples = _split(path.read_bytes())
        return next(
            (s.watts["GPU Power"] for s in reversed(samples) if "GPU Power" in s.watts), None
        )

    def analyse(self, path: Path, started: str, ended: str, mins: Minimums) -> Analysis:
        return analyse(path, started, ended, mins)

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
        if self._tmp is not None:
            self._tmp.cleanup()


def analyse(path: Path, started: str, ended: str, mins: Minimums) -> Analysis:
    """The energy of [started, ended] from the kept samples (module docstring)."""
    t0, t1 = datetime.fromisoformat(started), datetime.fromisoformat(ended)
    seconds = (t1 - t0).total_seconds()
    result = Analysis("not_measured", None, started, ended, seconds)
    _, samples = _split(path.read_bytes() + b"*** Sampled system activity\n")
    anchor(samples)
    ends = [(s, s.end) for s in samples if s.end is not None]
    timed = [s for s, _ in ends]
    if not ends or ends[0][1] - timedelta(seconds=ends[0][0].interval_s) > t0 or ends[-1][1] < t1:
        result.reason = (
            f"the powermetrics samples kept ({len(timed)}) do not cover the "
            "window: the capture stopped, or its clock is not this host's"
        )
        return result
    limit = mins.gap_factor * mins.sampling_interval_s
    gaps = [
        (a.end, b.end)
        for a, b in itertools.pairwise(timed)
        if a.end is not None
        and b.end is not None
        and t0 - timedelta(seconds=limit) <= b.end
        and a.end <= t1 + timedelta(seconds=limit)
        and (b.end - a.end).total_seconds() > limit
    ]
    if gaps:
        a, b = gaps[0]
        result.gaps.append(
            f"{(b - a).total_seconds():.3f} s between two samples ending "
            f"{a.isoformat()} and {b.isoformat()} (sampling period "
            f"{mins.sampling_interval_s} s)"
        )
        result.reason = "a sampling gap: " + result.gaps[0]
        return result
    host = next((h for h in HOSTS if all(h in s.watts for s in timed)), None)
    lines = [host] if host else [p for p in PARTS if any(p in s.watts for s in timed)]
    short, total = [], 0.0
    for label in lines:
        s = Series(SOURCE, label.split(" ")[0].lower(), 0, label, "interval")
        energy = 0.0
        for sample in timed:
            assert sample.end is not None
            lo = max(sample.end - timedelta(seconds=sample.interval_s), t0)
            hi = min(sample.end, t1)
            if hi <= lo:
                continue
            s.readings += 1
            energy += sample.watts.get(label, 0.0) * (hi - lo).total_seconds()
        s.energy_j = energy
        s.mean_watts = energy / seconds if seconds > 0 else None
        s.max_gap_s = max((x.interval_s for x in timed), default=None)
        result.series.append(s)
        total += energy
        if s.readings < mins.min_readings:
            short.append(
                f"{s.name} read {s.readings} time(s) over the window, fewer than the "
                f"protocol's {mins.min_readings} samples per window"
            )
    result.energy_source = SOURCE
    return result.conclude(total, short_window(seconds, mins) + short)
