"""Progress of an archive audit on a terminal: runs done of the total, rate, ETA on one
line that rewrites itself, and one line per run that could not be audited or is a refused
source. On a stream that is not a terminal (as click detects it) only those failure lines
are written; with `quiet`, nothing. `color` (`audit archive --color`, NO_COLOR, FORCE_COLOR:
`auditor.output.style`) styles the failure lines with click."""

from __future__ import annotations

import sys
import time
from typing import TextIO

import click

from auditor.output.style import paint


class Progress:
    REFRESH_SECONDS = 0.2

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

    def set_total(self, total: int, already: int) -> None:
        """TOTAL runs found, ALREADY of them in the index (not audited again)."""
        self.total, self.skipped = total, already
        self.t0 = time.monotonic()
        self._draw(force=True)

    def failure(self, source: str, why: str) -> None:
        self.failed += 1
        if self.quiet:
            return
        self._clear()
        self.stream.write(f"{paint('FAILED', 'failed', self.color)} {source}: {why}\n")
        self.stream.flush()
        self._draw(force=True)

    def advance(self) -> None:
        self.done += 1
        self._draw()

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
        if self.live:
            self._draw(force=True)
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else \
        f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"
