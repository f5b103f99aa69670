"""Progress of an archive audit: runs done of the total, rate, ETA, and one line per run
that could not be audited or is a refused source. On a terminal the progress is one line
that rewrites itself; on a stream that is not one (CI, a log file) it is a plain line at
least every `LOG_SECONDS` and at every `LOG_SHARE` of the runs, and once at the end, so a
long audit is never silent; with `quiet`, nothing. `color` (`audit archive --color`,
NO_COLOR, FORCE_COLOR: `auditor.output.style`) styles the failure lines with click."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

import click

from auditor.output.style import paint


class Progress:
    REFRESH_SECONDS = 0.2
    LOG_SECONDS = 10.0
    """Not a terminal: a line at least this often ..."""
    LOG_SHARE = 0.05
    """... and each time this share more of the runs is done."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False,
                 color: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.color = color
        # the line that rewrites itself needs a terminal, as click detects one
        self.live = not quiet and not click.utils.should_strip_ansi(self.stream)
        self.total: int | None = None
        self.done = 0
        self.skipped = 0
        self.failed = 0
        self.t0 = time.monotonic()
        self.shown = 0.0
        self.width = 0
        self.logged_at = 0.0
        self.logged_done = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None

    def set_total(self, total: int, already: int) -> None:
        """TOTAL runs found, ALREADY of them in the index (not audited again)."""
        self.total, self.skipped = total, already
        self.t0 = self.logged_at = time.monotonic()
        self._draw(force=True)
        if not self.quiet and not self.live and self._timer is None:
            # a run can take longer than LOG_SECONDS: the clock, not the runs, keeps time
            self._timer = threading.Thread(target=self._every, name="progress", daemon=True)
            self._timer.start()

    def _every(self) -> None:
        while not self._stop.wait(min(1.0, self.LOG_SECONDS)):
            self._log()

    def failure(self, source: str, why: str) -> None:
        self.failed += 1
        if self.quiet:
            return
        with self._lock:
            self._clear()
            self.stream.write(f"{paint('FAILED', 'failed', self.color)} {source}: {why}\n")
            self.stream.flush()
        self._draw(force=True)

    def advance(self) -> None:
        self.done += 1
        self._draw()
        self._log()

    def _log(self, force: bool = False) -> None:
        """Not a terminal: the progress line, every LOG_SECONDS or LOG_SHARE of the runs."""
        if self.quiet or self.live or self.total is None:
            return
        with self._lock:
            now = time.monotonic()
            todo = max(1, self.total - self.skipped)
            step = max(1, int(todo * self.LOG_SHARE))
            if force or now - self.logged_at >= self.LOG_SECONDS \
                    or self.done - self.logged_done >= step:
                self.logged_at, self.logged_done = now, self.done
                self.stream.write(self.line() + "\n")
                self.stream.flush()

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.t0, 1e-9)
        rate = self.done / elapsed
        todo = (self.total - self.skipped) if self.total is not None else None
        head = f"{self.done:,}/{todo:,} runs" if todo is not None else f"{self.done:,} runs"
        eta = (f", ETA {_duration((todo - self.done) / rate)}"
               if todo is not None and rate > 0 and self.done < todo else "")
        extra = f", {self.skipped:,} already in the index" if self.skipped else ""
        fails = f", {self.failed:,} failed" if self.failed else ""
        return f"{head}, {rate:.1f} runs/s{eta}{extra}{fails}"

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not self.live or (not force and now - self.shown < self.REFRESH_SECONDS):
            return
        self.shown = now
        text = self.line()
        self.stream.write("\r" + text.ljust(self.width))
        self.width = len(text)
        self.stream.flush()

    def _clear(self) -> None:
        if self.live and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.width = 0

    def close(self) -> None:
        self._stop.set()
        if self._timer is not None:
            self._timer.join()
            self._timer = None
        if not self.live and self.done != self.logged_done:
            self._log(force=True)  # the last line says where it ended
        if self.live:
            self._draw(force=True)
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else \
        f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"
