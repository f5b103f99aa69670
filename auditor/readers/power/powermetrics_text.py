"""macOS `powermetrics` text output (`sudo powermetrics --samplers cpu_power,gpu_power -i 1000`).

Each sample starts with a header that gives its local time, with the zone as written, and the
interval actually measured:

    *** Sampled system activity (Mon Oct 23 16:51:12 2023 +0200) (1012.07ms elapsed) ***

The header's time is when the sample was taken, at the end of its interval: `end` is that
time in UTC, `interval_s` the measured `ms elapsed` (not the nominal `-i`), `start` = end -
interval. A power line is the interval's average, so `energy_j` = watts x interval_s.
A header zone given as an offset is used as is; an abbreviation (or none) needs the
manifest's `local_utc_offset` (without it: a `timezone` warning, UTC assumed).

Power lines (`<label>: <value> mW`, or `W` on Intel) map to domains:

| label | domain |
| --- | --- |
| CPU Power | cpu |
| GPU Power | gpu |
| ANE Power | ane |
| Combined Power (CPU + GPU + ANE) | combined |
| Package Power (Monterey), Intel energy model derived package power (CPUs+GT+SA) | package |
| DRAM Power | dram |
| DCS Power | dcs |
| any other `... Power: N mW` line (E-Cluster Power, P0-Cluster Power, ...) | other |

- `*** Summary system activity` blocks are aggregates over many samples, not samples: they
  are skipped, counted, and their readings kept in `meta["summary_blocks"]`.
- A label that appears twice in one sample (`GPU Power` in the processor and again in the GPU
  section) gives one row: the first line is kept; a second line with another value is a
  `duplicate` warning.
- A sample without any power line (the `cpu_power` sampler was off) is an `empty` warning.
- A last sample with fewer readings than the others, or a last line without a line end, is
  a `truncated` warning: the file may be cut short.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import polars as pl

from auditor.readers._common import (
    MAX_LOG_BYTES,
    EvidenceReader,
    FaultLog,
    ReaderInfo,
    decode,
    local_offset,
    missing_line_end,
    parse_utc_offset,
    split_lines,
    to_utc,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.power import _frame

INFO = ReaderInfo(
    name="powermetrics-text", family="power", tool="powermetrics",
    extensions=(".txt", ".log"),
    description="macOS powermetrics text output (sudo powermetrics --samplers cpu_power,...)")

DOMAINS = {
    "CPU Power": "cpu",
    "GPU Power": "gpu",
    "ANE Power": "ane",
    "Combined Power (CPU + GPU + ANE)": "combined",
    "Package Power": "package",
    "Intel energy model derived package power (CPUs+GT+SA)": "package",
    "DRAM Power": "dram",
    "DCS Power": "dcs",
}

_HEADER = re.compile(
    r"^\*\*\* (?P<kind>Sampled|Summary) system activity \((?P<date>[^)]*)\) "
    r"\((?P<ms>\d+(?:\.\d+)?)\s*ms elapsed\) \*\*\*\s*$")
_DATE = re.compile(r"^(?P<t>\w{3} \w{3} +\d{1,2} \d{1,2}:\d{2}:\d{2} \d{4})(?: (?P<zone>\S+))?$")
_POWER = re.compile(
    r"^(?P<label>[A-Za-z][^:]*?[Pp]ower[^:]*?)\s*:\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>mW|W)\s*$")
_SCALE = {"mW": 1e-3, "W": 1.0}


MAX_INTERVAL_S = 86_400.0
"""No sample's measured interval is longer than a day (`-i` is milliseconds between samples):
a longer one (a 400-digit figure) is not a reading."""

SOC_INCLUDES = {"package": "ane,cpu,gpu", "combined": "ane,cpu,gpu"}
"""powermetrics' package (Apple silicon, and Intel's `CPUs+GT+SA`) and combined power hold
the CPU, the GPU and the Neural Engine: a window sums one of them alone, never with the GPU
line beside it."""


def sniff(head: bytes) -> bool:
    return (b"*** Sampled system activity" in head or b"*** Summary system activity" in head
            or (head.startswith(b"Machine model:") and b"OS version:" in head))


class _Sample:
    def __init__(self, line: int, end: datetime | None, interval: float, summary: bool) -> None:
        self.line, self.end, self.interval, self.summary = line, end, interval, summary
        self.readings: dict[str, tuple[float, int, str]] = {}


def read(data: bytes, *, name: str, local_utc_offset: str | None = None,
         **_: Any) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "powermetrics", "format": "text", "timestamps": True}
    if too_large(data, MAX_LOG_BYTES, log, "The powermetrics log"):
        return Read(None, log.faults(), meta)
    decoded = decode(data, log)
    if decoded is None:
        return Read(None, log.faults(), meta)
    text, meta["encoding"] = decoded
    lines = split_lines(text)
    for key in ("Machine model", "OS version"):
        hit = next((ln.split(":", 1)[1].strip() for ln in lines[:20]
                    if ln.startswith(key + ":")), None)
        if hit:
            meta[key.lower().replace(" ", "_")] = hit

    samples = _samples(lines, log, local_utc_offset, meta)
    missing_line_end(text, lines, log)
    timed = [s for s in samples if not s.summary]
    meta["samples"] = len(timed)
    meta["summary_blocks"] = [
        {"line": s.line, "elapsed_ms": round(s.interval * 1000, 3),
         "readings_w": {k: v[0] for k, v in s.readings.items()}}
        for s in samples if s.summary]
    rows = []
    for s in timed:
        if not s.readings:
            log.warning("This sample holds no power line (was the cpu_power "
                        "sampler on?).", kind="empty", line=s.line)
        for label, (watts, line, _) in s.readings.items():
            rows.append({"end": s.end, "interval_s": s.interval,
                         "start": s.end - timedelta(seconds=s.interval) if s.end else None,
                         "domain": DOMAINS.get(label, "other"), "watts": watts,
                         "energy_j": watts * s.interval, "source": label, "line": line})
    with_power = [s for s in timed if s.readings]
    meta["samples_with_power"] = len(with_power)
    if len(with_power) > 1 and len(with_power[-1].readings) < max(
            len(s.readings) for s in with_power[:-1]):
        log.warning("The last sample has fewer power lines than "
                    "the others: the file may be cut short.", kind="truncated",
                    line=with_power[-1].line)
    meta["units"] = sorted({u for s in timed for (_, _, u) in s.readings.values()})
    if not rows:
        log.error("No power reading in a sample: nothing to measure with"
                  + (" (only Summary blocks, which are aggregates)." if samples else "."),
                  kind="empty")
        return Read(None, log.faults(), meta)
    _frame.order_faults(_frame.from_rows([{"end": s.end, "line": s.line} for s in timed]),
                        log, by=(), what="sample")
    frame = _frame.from_rows(rows)
    _frame.snapshot_warning(frame, log)
    return Read(_frame.describe(frame, instrument="powermetrics", includes=SOC_INCLUDES),
                log.faults(), meta)


def _samples(lines: list[str], log: FaultLog, option: str | None,
             meta: dict[str, Any]) -> list[_Sample]:
    samples: list[_Sample] = []
    zones: list[str] = []
    assumed: timedelta | None = None
    current: _Sample | None = None
    for i, raw in enumerate(lines, start=1):
        if raw.startswith("*** S"):
            m = _HEADER.match(raw)
            if m is None:
                log.warning("A sample header that cannot be read: the sample is skipped.",
                            kind="syntax", line=i, value=raw)
                current = None
                continue
            end, zone, aware = _header_time(m["date"], i, log)
            if end is not None and not aware:
                if assumed is None:
                    assumed, tz_meta = local_offset(option, log, tool="This powermetrics log")
                    meta.update(tz_meta)
                end = to_utc(end, assumed)
            zones.append(zone or "")
            interval = float(m["ms"]) / 1000
            if not 0 < interval <= MAX_INTERVAL_S:
                log.error(f"The sample's measured interval, {m['ms'][:40]} ms, is not one "
                          "powermetrics measures: the sample is skipped.", kind="type", line=i,
                          value=m["ms"][:40])
                current = None
                continue
            current = _Sample(i, end, interval, m["kind"] == "Summary")
            samples.append(current)
            continue
        m = _POWER.match(raw.strip())
        if m is None:
            continue
        if current is None:
            log.warning("A power line outside any sample: skipped.", kind="syntax", line=i,
                        value=raw)
            continue
        label, watts = m["label"], float(m["value"]) * _SCALE[m["unit"]]
        if label in current.readings:
            kept, kept_line, _ = current.readings[label]
            if kept != watts:
                log.warning(f"{label} appears twice in the sample of line {current.line} with "
                            f"different values: line {kept_line} ({kept:g} W) is kept.",
                            kind="duplicate", line=i, field=label)
            continue
        current.readings[label] = (watts, i, m["unit"])
    meta["header_zones"] = sorted(set(zones))
    return samples


def _header_time(text: str, line: int, log: FaultLog
                 ) -> tuple[datetime | None, str | None, bool]:
    """The header's time, its zone as written, and whether the time is already UTC (the
    header gives an offset); else it is naive local time and the caller applies
    local_utc_offset."""
    m = _DATE.match(text.strip())
    try:
        local = datetime.strptime(" ".join(m["t"].split()), "%a %b %d %H:%M:%S %Y") if m else None
    except ValueError:
        local = None
    if local is None or to_utc(local, timedelta(0)) is None:
        log.error("The sample header's date cannot be read: the sample has no time.",
                  kind="type", line=line, value=text)
        return None, None, False
    zone = m["zone"] if m else None
    offset = parse_utc_offset(zone) if zone else None
    if offset is None:
        return local, zone, False
    return to_utc(local, offset), zone, True


READER = EvidenceReader(INFO, rank=130, sniff=sniff, read=read, doc=__doc__ or "")
