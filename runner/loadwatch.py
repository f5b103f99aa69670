"""How busy the machine was while the runner measured (seed A: "any concurrency on the
machine" goes in `notes`; protocol B, B2: no foreground load), for both protocols.

`LoadWatch` reads the machine's CPU time (`/proc/stat`) and this run's own CPU time (its
process and its finished children, `resource.getrusage`) when measuring starts, every
`interval_s` while it runs (a sampling thread) and when it ends. The difference is what
other processes used: `other_cpus_mean` CPUs on average over the region, and the highest
one-interval figure. The load average (`os.getloadavg`) is kept beside it: it counts this
run's own threads too, so it alone cannot say who was busy. The machine is *busy* when other
processes used at least `BUSY_OTHER_CPUS_FRACTION` of its CPUs on average (a convention in
`schemas/load-record.schema.json`, read by the auditor too).

Where `/proc/stat` does not exist (macOS, Windows) only the load average is recorded and
`other_cpus_mean` is None: not measured, never zero.
"""

from __future__ import annotations

import itertools
import os
import resource
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import schemas

PROC_STAT = Path("/proc/stat")


def convention() -> dict[str, Any]:
    """`schemas/load-record.schema.json`'s `x-convention`: the busy threshold, the sampling
    interval, how long the load before measuring is read."""
    return dict(schemas.load("load_record")["x-convention"])


def loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def machine_cpu_seconds(stat: Path = PROC_STAT) -> tuple[float, float] | None:
    """(busy, total) CPU seconds of the whole machine since boot, from the `cpu` line of
    /proc/stat (user nice system idle iowait irq softirq steal; guest time is inside user);
    None where the file is absent or unreadable."""
    try:
        with stat.open("r", encoding="ascii") as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:9]]
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    idle = ticks[3] + ticks[4]
    return (sum(ticks) - idle) / hz, sum(ticks) / hz


def own_cpu_seconds() -> float:
    """CPU seconds of this process (every thread), of its children already waited for, and
    of its children still running (the cold passes' fresh processes: without them a pass in a
    child process would read as another process's load)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime + _live_children()


def _children(proc: Path, me: int) -> list[str]:
    """This process's children: from /proc/self/task/*/children (cheap, Linux 3.5+), else
    by reading every process's parent in /proc."""
    try:
        tasks = os.listdir(proc / str(me) / "task")
        return [
            pid
            for tid in tasks
            for pid in (proc / str(me) / "task" / tid / "children").read_text().split()
        ]
    except OSError:
        pass
    try:
        return [e for e in os.listdir(proc) if e.isdigit()]
    except OSError:
        return []


def _live_children(proc: Path = Path("/proc")) -> float:
    """utime + stime of this process's running children (a reaped child is in RUSAGE_CHILDREN
    and no longer in /proc: never counted twice); 0 where /proc does not exist. Read once a
    sampling interval, while the passes run: kept cheap (`_children`)."""
    me, total = os.getpid(), 0
    for pid in _children(proc, me):
        try:
            text = (proc / pid / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        # the command name (field 2) may hold spaces: the fields after its ')' are fixed
        fields = text[text.rfind(")") + 2 :].split()
        if len(fields) > 12 and fields[1] == str(me):
            total += int(fields[11]) + int(fields[12])
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    return total / hz


def cpu_count(stat: Path = PROC_STAT) -> int:
    """The CPUs /proc/stat counts (`cpuN` lines: the machine whose time it sums, which in a
    container may be more than this process may use), else os.cpu_count()."""
    try:
        with stat.open("r", encoding="ascii") as fh:
            n = sum(1 for line in fh if line.startswith("cpu") and line[3:4].isdigit())
    except OSError:
        n = 0
    return n or os.cpu_count() or 1


@dataclass
class _Point:
    at: float
    machine: tuple[float, float] | None
    own: float
    load: list[float] | None


def _point() -> _Point:
    return _Point(time.monotonic(), machine_cpu_seconds(), own_cpu_seconds(), loadavg())


def _machine(a: _Point, b: _Point) -> float | None:
    """CPUs busy on the whole machine on average between A and B (this run included)."""
    if a.machine is None or b.machine is None or b.at - a.at <= 0:
        return None
    return (b.machine[0] - a.machine[0]) / (b.at - a.at)


def _others(a: _Point, b: _Point) -> float | None:
    """CPUs other processes used on average between A and B; None when not measurable."""
    if a.machine is None or b.machine is None or b.at - a.at <= 0:
        return None
    busy = b.machine[0] - a.machine[0]
    return max(0.0, (busy - (b.own - a.own)) / (b.at - a.at))


@dataclass
class LoadWatch:
    """Start it before the first measured pass or trial, stop it after the last; `record()`
    is what environment.json keeps under `concurrent_load.while_measuring`."""

    interval_s: float = field(default_factory=lambda: float(convention()["interval_s"]))
    _start: _Point | None = None
    _end: _Point | None = None
    _points: list[_Point] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def cpus(self) -> int:
        return cpu_count()

    def start(self) -> LoadWatch:
        self._start = _point()
        self._points = [self._start]
        self._thread = threading.Thread(target=self._run, name="load-watch", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            p = _point()
            with self._lock:
                self._points.append(p)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._end = _point()
        with self._lock:
            self._points.append(self._end)

    def __enter__(self) -> LoadWatch:
        return self if self._start is not None else self.start()

    def __exit__(self, *exc: object) -> None:
        if self._end is None:
            self.stop()

    def now(self) -> float | None:
        """Other processes' CPUs over the last interval sampled (for progress lines)."""
        with self._lock:
            pts = self._points[-2:]
        return _others(pts[0], pts[1]) if len(pts) == 2 else None

    def record(self) -> dict[str, Any]:
        assert self._start is not None and self._end is not None, "start() and stop() first"
        with self._lock:
            pts = list(self._points)
        steps = [o for a, b in itertools.pairwise(pts) if (o := _others(a, b)) is not None]
        cpus = cpu_count()
        # clock ticks and rusage round differently: never more than the machine has
        steps = [min(o, cpus) for o in steps]
        mean = _others(self._start, self._end)
        mean = None if mean is None else min(mean, cpus)
        busy = _machine(self._start, self._end)
        loads = [p.load[0] for p in pts if p.load]
        threshold = float(convention()["busy_other_cpus_fraction"])
        return {
            "method": "machine CPU time (/proc/stat) less this run's own (getrusage, its "
            "process and finished children), over the measured region",
            "cpus": cpus,
            "seconds": round(self._end.at - self._start.at, 3),
            "samples": len(steps),
            "interval_s": self.interval_s,
            "machine_cpus_mean": None if busy is None else round(min(busy, cpus), 3),
            "other_cpus_mean": None if mean is None else round(mean, 3),
            "other_cpus_max": round(max(steps), 3) if steps else None,
            "loadavg_1min_max": max(loads) if loads else None,
            "busy_threshold_cpus": round(threshold * cpus, 3),
            "busy": None if mean is None else mean >= threshold * cpus,
        }


def before(seconds: float | None = None) -> dict[str, Any]:
    """The load before measuring: a `LoadWatch` over SECONDS with the runner idle."""
    watch = LoadWatch().start()
    time.sleep(float(convention()["before_seconds"]) if seconds is None else seconds)
    watch.stop()
    return watch.record()


def sentence(rec: dict[str, Any] | None, when: str = "while measuring") -> str:
    """The record in words, for progress lines and the run's notes."""
    if not rec:
        return f"machine load {when}: not recorded"
    if rec.get("other_cpus_mean") is None:
        return (
            f"machine load {when}: other processes not measurable here (no "
            f"/proc/stat); 1-min load average up to {rec.get('loadavg_1min_max')}"
        )
    state = "BUSY" if rec["busy"] else "quiet"
    return (
        f"machine {state} {when}: other processes used "
        f"{rec['other_cpus_mean']:.2f} of {rec['cpus']} CPUs on average (up to "
        f"{rec['other_cpus_max'] or 0:.2f}) over {rec['seconds']:.0f} s; 1-min load "
        f"average up to {rec['loadavg_1min_max']}"
        + ("; timings are slower and more spread than on an idle machine" if rec["busy"] else "")
    )
