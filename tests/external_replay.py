"""Stand-ins for the power tools a Mac or Windows user runs, fed by the real logs of
tests/readers/fixtures: they write (or print) the log's own bytes at its own pace, sped up
by `speed` so a test takes seconds. The one thing they change is the time each sample is
stamped with: the moment the stand-in writes it (HWiNFO's `Date,Time` cells, in its own
format, local time), since the runner's windows are in this machine's present; every other
byte (the header, each sensor's value, the column layout, CRLF) is the real log's. Rows loop
back to the first when the log runs out. The runner's real code starts, reads, windows and
keeps them."""

from __future__ import annotations

import threading
import time
from datetime import datetime
from pathlib import Path


def hwinfo_stamp(moment: datetime) -> bytes:
    """`D.M.YYYY,H:M:S.mmm` as HWiNFO writes it (not zero-padded, milliseconds)."""
    return (f"{moment.day}.{moment.month}.{moment.year},{moment.hour}:{moment.minute}:"
            f"{moment.second}.{moment.microsecond // 1000:03d}").encode("ascii")


def _hwinfo_rows(source: Path) -> tuple[bytes, list[tuple[float, bytes]]]:
    """The header and (seconds since the previous row, the row after its date and time)."""
    lines = source.read_bytes().splitlines(keepends=True)
    header, rows, prev = lines[0], [], None
    for line in lines[1:]:
        if line.startswith(b"Date,Time"):
            break  # the footer
        date, clock, rest = line.split(b",", 2)
        d, m, y = (int(x) for x in date.split(b"."))
        hh, mm, ss = clock.split(b":")
        s, _, ms = ss.partition(b".")
        t = datetime(y, m, d, int(hh), int(mm), int(s), int(ms or 0) * 1000).timestamp()
        rows.append((0.0 if prev is None else t - prev, rest))
        prev = t
    return header, rows


class HwinfoReplay:
    """Appends a real HWiNFO log's rows to `dest`, as HWiNFO's logging does."""

    def __init__(self, source: Path, dest: Path, speed: float) -> None:
        self.header, self.rows = _hwinfo_rows(source)
        self.dest = dest
        self.speed = speed
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> HwinfoReplay:
        self.dest.write_bytes(self.header)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        i = 0
        due = time.monotonic()
        with open(self.dest, "ab", buffering=0) as f:
            while not self._stop.is_set():
                step, rest = self.rows[i % len(self.rows)]
                typical = self.rows[1][0] if len(self.rows) > 1 else 1.0
                due += (step if i % len(self.rows) else typical) / self.speed
                self._stop.wait(max(0.0, due - time.monotonic()))
                f.write(hwinfo_stamp(datetime.now()) + b"," + rest)
                i += 1
