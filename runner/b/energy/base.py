"""The instrument interface and the recorder of one region (a trial's window, an idle
measurement).

An instrument gives raw readings as runner power records: `counters()` (cumulative energy
counters, read on demand: at both ends of the window after a device synchronize, and by the
sampling thread so wraps can be counted and updates seen) and `samples()` (power readings,
NVML only, dated by the instrument's own timestamp). The recorder appends every record in the
order read; a counter is read and appended under one lock, so the file order of one counter
is its time order and a decrease in the file is a real decrease.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

Record = dict[str, Any]
"""One line of a power trace (schemas/runner-power-record.schema.json)."""


def iso_utc(moment: datetime) -> str:
    """RFC 3339 in UTC with an explicit offset, to the microsecond."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def now_utc() -> str:
    return iso_utc(datetime.now(UTC))


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class Instrument(Protocol):
    """One source of energy readings (NVML, RAPL); fakes in tests implement the same."""

    source: str
    """`nvml` or `rapl`: the record's `source` and the trials' `energy_source`."""

    def open(self) -> str | None:
        """Get ready; None when readable, else why not (the `unavailable` record's reason)."""

    def counters(self) -> list[Record]:
        """One `counter` record per counter, read now."""

    def samples(self) -> list[Record]:
        """New `sample` records since the last call (none for RAPL)."""

    def poll_interval(self, requested: float) -> float:
        """The sampling period to use: at most `requested`, shorter when the counter could
        wrap more than once between polls otherwise."""

    def describe(self) -> dict[str, Any]:
        """What is read (devices, zones, ranges), for the run's records."""

    def close(self) -> None:
        """Release the instrument."""


def unavailable(source: str, reason: str) -> Record:
    return {
        "kind": "unavailable",
        "t": now_utc(),
        "t_source": "host",
        "source": source,
        "reason": reason,
    }


class Recorder:
    """The records of one region: boundary markers and reads from the calling thread, and a
    sampling thread polling every instrument while the region runs."""

    def __init__(
        self,
        instruments: list[Instrument],
        missing: list[Record],
        interval: float,
        clock: Callable[[], str] = now_utc,
    ) -> None:
        self.instruments = instruments
        # why an instrument gives nothing, dated when this region's trace starts
        self.records: list[Record] = [{**r, "t": clock()} for r in missing]
        # the boards an instrument reads, named in the trace itself (NVML's name, UUID,
        # serial): an auditor tells this machine's readings from another's by them
        for inst in instruments:
            named = getattr(inst, "boards", None)
            self.records += [{**r, "t": clock()} for r in (named() if callable(named) else [])]
        self.interval = min([i.poll_interval(interval) for i in instruments] or [interval])
        self.clock = clock
        self.perf: dict[str, float] = {}
        """Marker event -> `time.perf_counter()` at the marker's instant (durations)."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start sampling (only when some instrument is readable)."""
        if self.instruments and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="power-sampler", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        self.poll()  # the samples that arrived since the last poll

    def read_counters(self) -> None:
        for inst in self.instruments:
            with self._lock:
                self.records.extend(inst.counters())

    def poll(self) -> None:
        self.read_counters()
        for inst in self.instruments:
            got = inst.samples()
            with self._lock:
                self.records.extend(got)

    def marker(self, event: str, label: str) -> str:
        """A region boundary dated now; returns its time (the same string as in the file)."""
        self.perf[event] = time.perf_counter()
        t = self.clock()
        with self._lock:
            self.records.append(
                {"kind": "marker", "t": t, "t_source": "host", "event": event, "label": label}
            )
        return t

    def begin(self, event: str, label: str) -> str:
        """Start of a region: the marker, then every counter (so the reads lie inside)."""
        t = self.marker(event, label)
        self.read_counters()
        return t

    def end(self, event: str, label: str) -> str:
        """End of a region: every counter, then the marker."""
        self.read_counters()
        return self.marker(event, label)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.poll()
