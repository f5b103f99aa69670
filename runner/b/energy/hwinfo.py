"""HWiNFO's sensor log as the runner's power instrument on Windows (seed B: "Capture the
1,000-inference window with HWiNFO sensor logging").

The user's HWiNFO writes its CSV (`energy.hwinfo_log`, logging every
`energy.sampling_interval_s`, 1 s on a real PC); the runner never writes to it. Before the
first trial (`check`) the log must exist and grow, its header must hold the date, the time and
a CPU package power column, and the interval between its newest rows must match the declared
one. For each trial (and each idle measurement) the runner waits until the log holds a row
after the window's end, then keeps the log's own lines that cover the window (the header, the
last row before the window, every row inside it, the first after) byte for byte as
`power/<policy_id>/trial-<n>.csv` (the footer HWiNFO writes only when logging stops is
absent: the auditor reads such a log with a `truncated` warning).

Energy, from those lines alone (`analyse`), by the auditor's convention
(auditor/protocols/b/facts/energy.py): each row's watts held over the time since the previous
row, pro rata at the window's edges; the CPU package (`CPU Package Power`, else AMD's `CPU
PPT`) plus the discrete GPU board (`GPU Power`) where the log has one. Times are local
without a zone, as HWiNFO logs them: the host's UTC offset (the manifest's
`local_utc_offset`) converts them.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from runner.b.energy.window import Analysis, Minimums, Series, short_window
from runner.errors import RunnerError

SOURCE = "hwinfo"
HOST_COLUMNS = ("CPU Package Power [W]", "CPU PPT [W]")
"""The column that holds the CPU, in the order one is chosen."""
GPU_COLUMN = "GPU Power [W]"
"""The discrete GPU's board power (NVIDIA, as NVML reports it)."""
BATTERY_COLUMN = "Charge Rate [W]"
_DATE = re.compile(r"^(\d{1,2})\.(\d{1,2})\.(\d{4})$")
_TIME = re.compile(r"^(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d+))?$")


def local_offset() -> timezone:
    """The host's UTC offset now (what the manifest records as `local_utc_offset`)."""
    return timezone(datetime.now().astimezone().utcoffset() or timedelta(0))


def row_time(date: str, clock: str, tz: timezone) -> datetime | None:
    """A row's time: `D.M.YYYY`, `H:M:S.mmm` (not zero-padded; the digits after the dot
    counted as milliseconds, as the auditor's reader reads them)."""
    d, t = _DATE.match(date.strip()), _TIME.match(clock.strip())
    if d is None or t is None:
        return None
    day, month, year = (int(x) for x in d.groups())
    h, m, s, ms = t.groups()
    return datetime(year, month, day, int(h), int(m), int(s), int(ms or 0) * 1000, tzinfo=tz)


@dataclass(frozen=True)
class Columns:
    """Where the date, time and the summed power columns are in the log's header."""

    names: list[str]
    host: int
    gpu: int | None

    @classmethod
    def of(cls, header: str, path: Path) -> Columns:
        names = next(csv.reader([header]))
        if names[:2] != ["Date", "Time"]:
            raise RunnerError(
                f"{path}: not an HWiNFO sensor log (its first line does not start "
                f"with Date,Time: {header[:60]!r})"
            )
        host = next((names.index(c) for c in HOST_COLUMNS if c in names), None)
        if host is None:
            raise RunnerError(
                f"{path}: the HWiNFO log has no CPU package power column "
                f"({' or '.join(HOST_COLUMNS)}); enable the CPU sensor in "
                "HWiNFO's sensor settings and log it"
            )
        return cls(names, host, names.index(GPU_COLUMN) if GPU_COLUMN in names else None)


@dataclass(frozen=True)
class Row:
    t: datetime
    line: bytes
    host_w: float | None
    gpu_w: float | None


def _rows(data: bytes, cols: Columns, tz: timezone) -> tuple[bytes, list[Row]]:
    """The header line and every complete data row (a cut last line is left for later)."""
    lines = data.splitlines(keepends=True)
    if not lines:
        return b"", []
    header, out = lines[0], []
    for raw in lines[1:]:
        if not raw.endswith(b"\n"):
            break  # HWiNFO is still writing it
        cells = next(csv.reader([raw.decode("cp1252", errors="replace")]))
        if cells[:2] == ["Date", "Time"]:
            break  # the footer: logging stopped
        t = row_time(cells[0], cells[1], tz) if len(cells) > 2 else None
        if t is None:
            continue
        out.append(Row(t, raw, _watts(cells, cols.host), _watts(cells, cols.gpu)))
    return header, out


def _watts(cells: list[str], i: int | None) -> float | None:
    try:
        return float(cells[i]) if i is not None and i < len(cells) else None
    except ValueError:
        return None


class HwinfoLog:
    """The user's HWiNFO log, read for each window; never written."""

    source = SOURCE
    extension = ".csv"

    def __init__(self, path: Path, interval_s: float, timeout_s: float = 10.0) -> None:
        self.path = path
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.tz = local_offset()
        self.columns: Columns | None = None

    def _read(self) -> tuple[bytes, list[Row]]:
        data = self.path.read_bytes()
        if self.columns is None:
            self.columns = Columns.of(
                data.split(b"\n", 1)[0].decode("cp1252").rstrip("\r"), self.path
            )
        return _rows(data, self.columns, self.tz)

    def check(self) -> str:
        """Refuse (RunnerError) a log that cannot measure the windows; say what it reads."""
        deadline = time.monotonic() + self.timeout_s + 3 * self.interval_s
        rows: list[Row] = []
        while time.monotonic() < deadline:
            if self.path.is_file() and self.path.stat().st_size:
                _, rows = self._read()
                if len(rows) >= 3:
                    break
            time.sleep(min(self.interval_s, 0.5))
        if len(rows) < 3:
            raise RunnerError(
                f"{self.path}: HWiNFO is not logging there (fewer than three rows "
                f"after {self.timeout_s:g} s): start HWiNFO's sensor logging to "
                "this file before the run"
            )
        step = (rows[-1].t - rows[-2].t).total_seconds()
        if not 0 < step <= 1.5 * self.interval_s:
            raise RunnerError(
                f"{self.path}: HWiNFO logs every {step:.3f} s, the run declares "
                f"energy.sampling_interval_s = {self.interval_s:g}: set HWiNFO's "
                "logging interval to match (Settings, Sensors, Logging interval)"
            )
        age = (datetime.now(self.tz) - rows[-1].t).total_seconds()
        if abs(age) > 5 * self.interval_s + 2:
            raise RunnerError(
                f"{self.path}: the newest row is {age:.1f} s old: the log is "
                "not being written now (or the clock's time zone differs)"
            )
        assert self.columns is not None
        gpu = "" if self.columns.gpu is None else f" and {GPU_COLUMN}"
        return (
            f"hwinfo: {self.path} every {step:.3f} s, {self.columns.names[self.columns.host]}{gpu}"
        )

    @property
    def has_gpu(self) -> bool:
        return self.columns is not None and self.columns.gpu is not None

    def capture(self, t0: datetime, t1: datetime, dest: Path) -> None:
        """Keep the log's lines covering [t0, t1] (waits for the first row after t1)."""
        deadline = time.monotonic() + self.timeout_s + 3 * self.interval_s
        header, rows = self._read()
        while not rows or rows[-1].t <= t1:
            if time.monotonic() > deadline:
                break  # kept as it is: the window is not covered, and analyse says so
            time.sleep(min(self.interval_s / 4, 0.25))
            header, rows = self._read()
        before = [i for i, r in enumerate(rows) if r.t < t0]
        after = [i for i, r in enumerate(rows) if r.t > t1]
        lo = before[-1] if before else 0
        hi = after[0] if after else len(rows) - 1
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(header + b"".join(r.line for r in rows[lo : hi + 1]))

    def close(self) -> None:
        """Nothing to release: the log is HWiNFO's."""

    def last_gpu_watts(self, path: Path) -> float | None:
        """The last reading of the discrete GPU in a kept trace."""
        assert self.columns is not None
        _, rows = _rows(path.read_bytes(), self.columns, self.tz)
        return next((r.gpu_w for r in reversed(rows) if r.gpu_w is not None), None)

    def analyse(self, path: Path, started: str, ended: str, mins: Minimums) -> Analysis:
        return analyse(path, started, ended, mins, self.tz)


def analyse(path: Path, started: str, ended: str, mins: Minimums, tz: timezone) -> Analysis:
    """The energy of [started, ended] from the kept lines (module docstring)."""
    t0, t1 = datetime.fromisoformat(started), datetime.fromisoformat(ended)
    seconds = (t1 - t0).total_seconds()
    result = Analysis("not_measured", None, started, ended, seconds)
    data = path.read_bytes()
    header = io.BytesIO(data).readline().decode("cp1252").rstrip("\r\n")
    try:
        cols = Columns.of(header, path)
    except RunnerError as exc:
        result.reason = str(exc)
        return result
    _, rows = _rows(data, cols, tz)
    if len(rows) < 2 or rows[0].t > t0 or rows[-1].t < t1:
        result.reason = (
            f"the HWiNFO lines kept ({len(rows)} rows) do not cover the window: "
            "HWiNFO stopped logging, or its clock is not this host's"
        )
        return result
    parts = [
        ("package" if "Package" in cols.names[cols.host] else "ppt", cols.host, lambda r: r.host_w)
    ]
    if cols.gpu is not None:
        parts.append(("gpu", cols.gpu, lambda r: r.gpu_w))
    total = 0.0
    short = []
    gap_limit = mins.gap_factor * mins.sampling_interval_s
    for domain, index, watts in parts:
        s = Series(SOURCE, domain, 0, cols.names[index], "interval")
        energy, steps = 0.0, []
        for prev, row in itertools.pairwise(rows):
            lo, hi = max(prev.t, t0), min(row.t, t1)
            if hi <= lo:
                continue
            steps.append((row.t - prev.t).total_seconds())
            w = watts(row)
            if w is None:
                s.problems.append(f"no reading at {row.t.isoformat()}")
                continue
            s.readings += 1
            energy += w * (hi - lo).total_seconds()
        s.max_gap_s = max(steps) if steps else None
        if s.max_gap_s is not None and s.max_gap_s > gap_limit:
            result.gaps.append(
                f"{s.name}: {s.max_gap_s:.3f} s between two rows (sampling "
                f"period {mins.sampling_interval_s} s)"
            )
            s.problems.append("a sampling gap")
        s.energy_j = None if s.problems else energy
        s.mean_watts = energy / seconds if seconds > 0 and not s.problems else None
        result.series.append(s)
        if s.readings < mins.min_readings:
            short.append(
                f"{s.name} read {s.readings} time(s) over the window, fewer than the "
                f"protocol's {mins.min_readings} samples per window"
            )
        total += energy
    problems = [f"{s.name}: {p}" for s in result.series for p in s.problems]
    if problems:
        result.reason = "; ".join(problems)
        return result
    result.energy_source = SOURCE
    return result.conclude(total, short_window(seconds, mins) + short)
