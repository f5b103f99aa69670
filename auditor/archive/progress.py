"""Progress of an archive audit: runs done of the total, rate, ETA, and one line per run
that could not be audited or is a refused source. On a terminal the progress is one line
that rewrites itself; on a stream that is not one (CI, a log file) it is a plain line at
least every `LOG_SECONDS` and at every `LOG_SHARE` of the runs, and once at the end, so a
long audit is never silent; with `quiet`, nothing. `color` (`audit archive --color`,
NO_COLOR, FORCE_COLOR: `auditor.output.style`) styles the failure lines with click.

On a terminal, where `rich` is installed, rich draws the live line (bar, runs done of the
total, rate, time left) and prints each failure above it (`_RichLine`); without rich, the
line is drawn here. Kept here in every case: the plain lines off a terminal, which neither
rich nor click's `progressbar` writes (both draw only on a terminal, and a CI log of a long
audit would stay silent), and the rate, which click's bar does not show."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

import click

from auditor.output.style import paint


class Progress:
    REFRESH_SECONDS = 0.2
    LOG_SECONDS = 10.0
    """Not a terminal: a line at least this often ..."""
    LOG_SHARE = 0.05
    """... and each time this share more of the runs is done."""

    def __init__(
        self, stream: TextIO | None = None, *, quiet: bool = False, color: bool = False
    ) -> None:
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
        self._rich = _RichLine.make(self.stream, color) if self.live else None

    def set_total(self, total: int, already: int) -> None:
        """TOTAL runs found, ALREADY of them in the index (not audited again)."""
        self.total, self.skipped = total, already
        self.t0 = self.logged_at = time.monotonic()
        if self._rich is not None:
            self._rich.start(total - already, already)
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
        text = f"{paint('FAILED', 'failed', self.color)} {source}: {why}"
        if self._rich is not None:
            self._rich.print(text)
            return
        with self._lock:
            self._clear()
            self.stream.write(text + "\n")
            self.stream.flush()
        self._draw(force=True)

    def advance(self) -> None:
        self.done += 1
        if self._rich is not None:
            self._rich.advance()
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
            if (
                force
                or now - self.logged_at >= self.LOG_SECONDS
                or self.done - self.logged_done >= step
            ):
                self.logged_at, self.logged_done = now, self.done
                self.stream.write(self.line() + "\n")
                self.stream.flush()

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.t0, 1e-9)
        rate = self.done / elapsed
        todo = (self.total - self.skipped) if self.total is not None else None
        head = f"{self.done:,}/{todo:,} runs" if todo is not None else f"{self.done:,} runs"
        eta = (
            f", ETA {_duration((todo - self.done) / rate)}"
            if todo is not None and rate > 0 and self.done < todo
            else ""
        )
        extra = f", {self.skipped:,} already in the index" if self.skipped else ""
        fails = f", {self.failed:,} failed" if self.failed else ""
        return f"{head}, {rate:.1f} runs/s{eta}{extra}{fails}"

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if (
            not self.live
            or self._rich is not None
            or (not force and now - self.shown < self.REFRESH_SECONDS)
        ):
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
        if self._rich is not None:
            self._rich.stop()
        elif self.live:
            self._draw(force=True)
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    return (
        f"{s // 3600}h{s % 3600 // 60:02d}m"
        if s >= 3600
        else f"{s // 60}m{s % 60:02d}s"
        if s >= 60
        else f"{s}s"
    )


class _RichLine:
    """The live line drawn by rich (when installed): a bar, runs done of the total, the rate
    and the time left; failures printed above it, in the colours `paint` gave them."""

    def __init__(self, bar: Any, text_type: Any) -> None:
        self.bar, self.text_type = bar, text_type
        self.task: Any = None

    @classmethod
    def make(cls, stream: TextIO, color: bool) -> _RichLine | None:
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                ProgressColumn,
                TextColumn,
                TimeRemainingColumn,
            )
            from rich.progress import (
                Progress as Bar,
            )
            from rich.text import Text
        except ImportError:
            return None

        class Rate(ProgressColumn):
            def render(self, task: Any) -> Any:
                return Text(f"{task.speed or 0.0:.1f} runs/s")

        console = Console(file=stream, force_terminal=True, no_color=not color, highlight=False)
        bar = Bar(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            Rate(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[extra]}"),
            console=console,
            transient=False,
        )
        return cls(bar, Text)

    def start(self, todo: int, already: int) -> None:
        extra = f"{already:,} already in the index" if already else ""
        self.task = self.bar.add_task("runs", total=max(todo, 0), extra=extra)
        self.bar.start()

    def advance(self) -> None:
        if self.task is not None:
            self.bar.advance(self.task)

    def print(self, text: str) -> None:
        self.bar.console.print(self.text_type.from_ansi(text))

    def stop(self) -> None:
        self.bar.stop()
