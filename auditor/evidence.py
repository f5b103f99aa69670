"""`audit evidence FILE`: what the auditor makes of one evidence file, before a team submits
it. Picks the reader (`auditor.readers.evidence_kinds`), reads the file and summarises the
frame: for power, the samples, time span, median and largest interval, gaps, and per
domain, device and source the mean, min and max watts and the energy where known; for
placement, the shares of `placement_shares`; and every fault with its line.

The result is a small frozen `EvidenceSummary`; the formats of
`auditor.output.evidence` only format it. A file is unusable (exit 1) when no reader takes it or its
reader returns no frame, a power frame has no reading, or a placement frame has no node with
placement information.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, is_dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, cast

import polars as pl

from auditor.readers import evidence_kinds
from auditor.readers._common import parse_utc_offset
from auditor.readers.base import Fault
from auditor.readers.placement._frame import ACCELERATORS, placement_shares

#: An interval longer than this many times the median is listed as a gap.
GAP_FACTOR = 2.0
#: Gaps listed one by one (the count is always given).
MAX_GAPS_LISTED = 50


@dataclass(frozen=True)
class PowerSummary:
    readings: int
    """Rows of the frame: one per (sample, source, device)."""
    samples: int
    """Distinct sample times (the file's rows or reports); untimed files: distinct lines."""
    timestamps: bool
    """Whether the readings have times: False means coverage cannot be shown (dmon)."""
    start: str | None
    """Earliest start (or time where no start is known), ISO 8601 UTC."""
    end: str | None
    span_s: float | None
    median_interval_s: float | None
    max_interval_s: float | None
    gaps: tuple[dict[str, Any], ...]
    """Samples whose interval exceeds GAP_FACTOR x the median: line, device, time, interval."""
    gap_count: int
    devices: tuple[int | None, ...]
    domains: tuple[dict[str, Any], ...]
    """Per (domain, device, source): readings, mean/min/max W, energy J where known, span."""


@dataclass(frozen=True)
class EvidenceSummary:
    file: str
    size_bytes: int
    reader: str | None
    family: str | None
    tool: str | None
    description: str | None
    usable: bool
    reason: str | None
    """Why the file is unusable, in one sentence; None when usable."""
    power: PowerSummary | None = None
    placement: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    faults: tuple[Fault, ...] = ()

    @property
    def exit_code(self) -> int:
        return 0 if self.usable else 1


def option_problem(*, reader: str | None, local_utc_offset: str | None) -> str | None:
    """What is wrong with the options of `audit evidence`, in one sentence; None if nothing."""
    if local_utc_offset is not None and parse_utc_offset(local_utc_offset) is None:
        return f"--local-utc-offset {local_utc_offset!r} is not an offset like +01:00."
    if reader is not None and evidence_kinds.by_name(reader) is None:
        return f"--reader {reader!r} is not a reader; readers: {', '.join(evidence_kinds.names())}."
    return None


def summarise_file(
    path: Path,
    *,
    reader: str | None = None,
    local_utc_offset: str | None = None,
    name: str | None = None,
) -> EvidenceSummary:
    """Read `path` and summarise it (see `summarise`)."""
    return summarise(
        path.read_bytes(), name or str(path), reader=reader, local_utc_offset=local_utc_offset
    )


def summarise(
    data: bytes, name: str, *, reader: str | None = None, local_utc_offset: str | None = None
) -> EvidenceSummary:
    """What the auditor makes of one evidence file's bytes."""
    reader_used, read = evidence_kinds.read(
        data, name, reader=reader, local_utc_offset=local_utc_offset
    )
    info = reader_used.info if reader_used else None
    base = {
        "file": name,
        "size_bytes": len(data),
        "reader": info.name if info else None,
        "family": info.family if info else None,
        "tool": info.tool if info else None,
        "description": info.description if info else None,
        "meta": jsonable(dict(read.meta)),
        "faults": read.faults,
    }
    frame = read.value
    if frame is None or info is None:
        first = next((f for f in read.faults if f.severity == "error"), None)
        return EvidenceSummary(
            usable=False, reason=first.message if first else "The reader returned nothing.", **base
        )
    if info.family == "power":
        power = _power(frame)
        usable = power.readings > 0
        return EvidenceSummary(
            usable=usable,
            power=power,
            reason=None if usable else "No power reading in the file.",
            **base,
        )
    shares = jsonable(placement_shares(frame, ACCELERATORS))
    usable = shares["ops_with_placement"] > 0
    return EvidenceSummary(
        usable=usable,
        placement=shares,
        reason=None if usable else "No node carries placement information.",
        **base,
    )


def _power(frame: pl.DataFrame) -> PowerSummary:
    timed = frame.filter(pl.col("end").is_not_null())
    samples = (
        timed.group_by("device", "end")
        .agg(pl.col("interval_s").max(), pl.col("line").min())
        .sort("end", "line")
    )
    intervals = samples["interval_s"].drop_nulls()
    median = float(cast(float, intervals.median())) if intervals.len() else None
    gaps = (
        samples.filter(pl.col("interval_s") > GAP_FACTOR * median).sort("line")
        if median
        else samples.clear()
    )
    first = timed.select(pl.coalesce("start", "end").min()).item() if timed.height else None
    last = cast(datetime, timed["end"].max()) if timed.height else None
    domains = (
        frame.group_by("domain", "device", "source", maintain_order=True)
        .agg(
            readings=pl.len(),
            mean_w=pl.col("watts").mean(),
            min_w=pl.col("watts").min(),
            max_w=pl.col("watts").max(),
            energy_j=pl.when(pl.col("energy_j").is_not_null().any()).then(pl.col("energy_j").sum()),
            first=pl.col("end").min(),
            last=pl.col("end").max(),
        )
        .sort("domain", "device", "source", nulls_last=True)
    )
    return PowerSummary(
        readings=frame.height,
        samples=timed["end"].n_unique() if timed.height else frame["line"].n_unique(),
        timestamps=timed.height > 0,
        start=_iso(first),
        end=_iso(last),
        span_s=(last - first).total_seconds() if first and last else None,
        median_interval_s=median,
        max_interval_s=float(cast(float, intervals.max())) if intervals.len() else None,
        gaps=tuple(
            {
                "line": r["line"],
                "device": r["device"],
                "end": _iso(r["end"]),
                "interval_s": r["interval_s"],
            }
            for r in gaps.head(MAX_GAPS_LISTED).iter_rows(named=True)
        ),
        gap_count=gaps.height,
        devices=tuple(sorted(set(frame["device"].to_list()), key=lambda d: (d is None, d))),
        domains=tuple(jsonable(r) for r in domains.iter_rows(named=True)),
    )


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.isoformat().replace("+00:00", "Z")


def jsonable(value: Any) -> Any:
    """`value` with datetimes as ISO strings, tuples and sets as lists, non-finite floats as
    None and unknown objects as their text, so that it prints as JSON."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        return jsonable(asdict(value))
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return [jsonable(v) for v in items]
    if isinstance(value, datetime):
        return _iso(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, str | int | bool):
        return value
    return str(value)
