"""What the nvidia-smi readers share: missing-value words, watts with or without a unit,
nvidia-smi's ctime timestamps, and the snapshot model that `-q` text and `-q -x` XML both
fill (one timestamp, then per GPU the readings of its power sections).

Power sections and fields (XML tag or `-q` label, compared lower-case with `_` for spaces):

| section | domain |
| --- | --- |
| power_readings (DTD v11-, -q "Power Readings"), gpu_power_readings (v12+) | gpu |
| gpu_memory_power_readings | gpu_memory |
| module_power_readings | module (the whole module, e.g. Grace Hopper: includes cpu,gpu) |

Readings: power_draw (v12 and older), average_power_draw and instant_power_draw (v13;
-q "Instantaneous Power Draw"). Limits (current_power_limit, ...) are settings, not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import polars as pl

from auditor.readers import identity
from auditor.readers._common import FaultLog, local_offset, to_utc
from auditor.readers.power import _frame

#: Cell or element texts that mean "no value" (nvidia-smi writes several spellings). The
#: patterns are plain strings so that the CSV reader applies them with polars too.
MISSING_PATTERN = (
    r"^\s*(\[.*\]|N/A|Not Supported|Requested functionality has been deprecated"
    r"|Unknown Error|)\s*$"
)
#: A power with or without its unit: `631.95 W`, `631.95`, `500 mW`.
WATTS_PATTERN = r"^\s*(?P<v>\d+(?:\.\d+)?)\s*(?P<u>W|mW)?\s*$"
SCALE = {None: 1.0, "W": 1.0, "mW": 1e-3}
MISSING = re.compile(MISSING_PATTERN)
_WATTS = re.compile(WATTS_PATTERN)

SECTIONS = {
    "power_readings": "gpu",
    "gpu_power_readings": "gpu",
    "gpu_memory_power_readings": "gpu_memory",
    "module_power_readings": "module",
}
READINGS = {"power_draw", "average_power_draw", "instant_power_draw", "instantaneous_power_draw"}


def describe(frame: pl.DataFrame, log: FaultLog) -> pl.DataFrame:
    """FRAME's readings as nvidia-smi's: a board's instantaneous reading ranks first, then
    `power.draw` (a 1 s average on Ampere and newer, instantaneous before), then the explicit
    1 s average (`power.draw.average`, `average_power_draw`)."""
    sources = frame["source"].unique().to_list()

    def rank(source: str) -> int:
        low = source.lower()
        return 0 if "instant" in low else 2 if "average" in low else 1

    ranks = {s: rank(s) for s in sources}
    averaging = {s: 1.0 if "average" in s.lower() else None for s in sources}
    return _frame.describe(
        frame,
        log,
        instrument="nvidia-smi",
        includes={"module": "cpu,gpu"},
        rank=pl.col("source").replace_strict(ranks, return_dtype=pl.Int64),
        averaging_s=pl.col("source").replace_strict(averaging, return_dtype=pl.Float64),
    )


def key(label: str) -> str:
    """`GPU Power Readings` and `gpu_power_readings` alike: lower case, `_` for spaces."""
    return "_".join(label.strip().lower().split())


def watts(text: str) -> float | None:
    """Watts from `631.95 W` or `631.95`; None for a missing value or anything else."""
    m = _WATTS.match(text)
    return float(m["v"]) * SCALE[m["u"]] if m else None


def ctime(text: str) -> datetime | None:
    """nvidia-smi's `Tue Jul 14 08:12:53 2026` (local, to the second) as a naive datetime."""
    try:
        return datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y")
    except ValueError:
        return None


@dataclass
class Reading:
    section: str
    name: str
    text: str
    line: int | None


@dataclass
class Gpu:
    line: int | None
    info: dict[str, Any] = field(default_factory=dict)
    readings: list[Reading] = field(default_factory=list)


@dataclass
class Snapshot:
    """One `nvidia-smi -q` (or `-q -x`) report: its time and its GPUs, in index order."""

    line: int | None
    stamp: str | None = None
    attached: str | None = None
    gpus: list[Gpu] = field(default_factory=list)


def snapshot_frame(
    snapshots: list[Snapshot],
    log: FaultLog,
    meta: dict[str, Any],
    option: str | None,
    source_of: Any,
) -> pl.DataFrame | None:
    """The power frame of a series of snapshots. `device` is the GPU's position in its
    snapshot (nvidia-smi lists GPUs in index order); `source_of(reading)` names the reading
    as the format does. One snapshot per device is a reading, not a trace: `coverage`."""
    offset: timedelta | None = None
    rows, samples, missing = [], [], []
    devices: list[dict[str, Any]] = []
    # no report of the file has a timestamp (a trimmed copy): its readings have no time, as
    # dmon's without -o T; said once, as coverage, and `meta["timestamps"]` says so
    timeless = bool(snapshots) and not any(s.stamp for s in snapshots)
    if timeless:
        meta["timestamps"] = False
        log.warning(
            "The report has no timestamp: its readings cannot show which window they "
            "cover (keep nvidia-smi's <timestamp>, or log with --query-gpu=timestamp,"
            "...).",
            kind="coverage",
            line=snapshots[0].line,
        )
    for snap in snapshots:
        local = ctime(snap.stamp) if snap.stamp else None
        if local is None or to_utc(local, timedelta(0)) is None:
            local = None
            if not timeless:
                log.error(
                    "The report has no readable timestamp: its readings have no time.",
                    kind="type",
                    line=snap.line,
                    value=snap.stamp,
                )
        elif offset is None:
            offset, tz_meta = local_offset(option, log, tool="nvidia-smi")
            meta.update(tz_meta)
        end = to_utc(local, offset) if local and offset is not None else None
        if snap.attached and snap.attached.isdigit() and int(snap.attached) != len(snap.gpus):
            log.warning(
                f"The report says {snap.attached} attached GPUs but describes "
                f"{len(snap.gpus)}: it was cut or trimmed.",
                kind="truncated",
                line=snap.line,
            )
        for index, gpu in enumerate(snap.gpus):
            if index >= len(devices):
                devices.append({"index": index, **gpu.info})
            samples.append({"end": end, "device": index, "line": gpu.line or snap.line or 0})
            for r in gpu.readings:
                section, name = key(r.section), key(r.name)
                if section not in SECTIONS or name not in READINGS:
                    continue
                value = watts(r.text)
                if value is None:
                    if MISSING.match(r.text):
                        missing.append((index, gpu.info.get("name"), source_of(r), r.text))
                    else:
                        log.error(
                            f"{source_of(r)} is not a power in W.",
                            kind="units",
                            line=r.line,
                            field=source_of(r),
                            value=r.text,
                        )
                    continue
                rows.append(
                    {
                        "end": end,
                        "domain": SECTIONS[section],
                        "device": index,
                        "watts": value,
                        "source": source_of(r),
                        "line": r.line,
                    }
                )
    meta["devices"] = devices
    meta["identity"] = identity.Identity(gpus=identity.gpus_of(devices))
    meta["snapshots"] = len(snapshots)
    if not rows:
        if missing:
            gpus = sorted({f"GPU {i}" + (f" ({n})" if n else "") for i, n, _, _ in missing})
            fields = sorted({f"{src} {text.strip() or '(empty)'}" for _, _, src, text in missing})
            log.error(
                f"No power reading in the file: every power reading is missing "
                f"({'; '.join(fields)}) for {', '.join(gpus)}: this GPU or driver "
                "reports no board power.",
                kind="empty",
            )
        else:
            log.error("No power reading in the file (no power section in any GPU).", kind="empty")
        return None
    frame = describe(_frame.with_point_intervals(_frame.from_rows(rows)), log)
    _frame.order_faults(_frame.from_rows(samples), log, by=("device",), what="report")
    _frame.snapshot_warning(frame, log)
    return frame
