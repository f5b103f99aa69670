"""macOS `powermetrics` text output (`sudo powermetrics --samplers cpu_power,gpu_power -i 1000`).

Each `*** Sampled system activity` block is one sample. Its header gives the local time, to
the second, with the zone as written, and the interval actually measured:

    *** Sampled system activity (Mon Oct 23 16:51:12 2023 +0200) (1012.07ms elapsed) ***

- **Times**: the header's time is when the sample was taken (the end of its interval), cut to
  the second, so at `-i 100` or `-i 500` several samples share one header time. A sample's
  `end` is therefore its header's second plus the `ms elapsed` figures: along a run of
  samples, end = A + the elapsed times summed so far, where A is the earliest anchor for which
  every header of the run reads its sample's end cut to the second (end - header in [0, 1)).
  When no anchor fits every header (the clock jumped, the machine slept, a header goes back),
  a new run starts at that sample. A single sample, or a 1 Hz log whose headers tick with its
  intervals, gets exactly its header's time. The width of the range of fitting anchors, the
  most the times can be off, is `meta["time_uncertainty_s"]` (largest over the runs);
  `meta["time_runs"]` counts the runs.
- `interval_s` is the measured `ms elapsed` (not the nominal `-i`), `start` = end - interval.
  A power line is the interval's average, so `energy_j` = watts x interval_s.
- A header zone given as an offset is used as is; an abbreviation (or none) needs the
  manifest's `local_utc_offset` (without it: a `timezone` warning, UTC assumed).

Power lines (`<label>: <value> mW`, or `W` on Intel) map to domains:

| label | domain | includes |
| --- | --- | --- |
| CPU Power; Clusters Total Power (Big Sur's name of it: the sum of the clusters) | cpu | cpu |
| GPU Power | gpu | gpu |
| ANE Power | ane | ane |
| Combined Power (CPU + GPU + ANE) | combined | ane,cpu,gpu |
| Package Power (Apple silicon, Big Sur and Monterey) | package | ane,cpu,gpu |
| Intel energy model derived package power (CPUs+GT+SA) | package | cpu,gpu (integrated GT) |
| DRAM Power | dram | (none) |
| DCS Power | dcs | (none) |
| any other `... Power: N mW` line (E-Cluster Power, P0-Cluster Power, ...) | other | (none) |

An Intel Mac has no Neural Engine, and a discrete GPU lies outside its package.

- `*** Summary system activity` blocks are aggregates over many samples, not samples: they
  are skipped, counted, and their readings kept in `meta["summary_blocks"]`.
- A label that appears twice in one sample (`GPU Power` in the processor and again in the GPU
  section) gives one row: the first line is kept; a second line with another value is a
  `duplicate` warning.
- A sample without any power line (the `cpu_power` sampler was off) is an `empty` warning.
- A last sample with fewer readings than the others, or a last line without a line end, is
  a `truncated` warning: the file may be cut short.
- A value that is not a plausible power (a 400-digit number) is a fault, never a row
  (`_frame.screen`); an `ms elapsed` that is zero or over a day gives its sample no interval
  and no energy (`type` error).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import polars as pl

from auditor.readers import identity
from auditor.readers._common import (
    MAX_LOG_BYTES,
    EvidenceReader,
    FaultLog,
    ReaderInfo,
    decode,
    local_offset,
    missing_line_end,
    parse_utc_offset,
    text_frame,
    to_utc,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.power import _frame

INFO = ReaderInfo(
    name="powermetrics-text",
    family="power",
    tool="powermetrics",
    extensions=(".txt", ".log"),
    description="macOS powermetrics text output (sudo powermetrics --samplers cpu_power,...)",
)

INTEL_PACKAGE = "Intel energy model derived package power (CPUs+GT+SA)"
DOMAINS = {
    "CPU Power": "cpu",
    "Clusters Total Power": "cpu",
    "GPU Power": "gpu",
    "ANE Power": "ane",
    "Combined Power (CPU + GPU + ANE)": "combined",
    "Package Power": "package",
    INTEL_PACKAGE: "package",
    "DRAM Power": "dram",
    "DCS Power": "dcs",
}

SOC_INCLUDES = {"package": "ane,cpu,gpu", "combined": "ane,cpu,gpu"}
"""Apple silicon's package and combined power hold the CPU, the GPU and the Neural Engine:
a window sums one of them alone, never with the GPU line beside it."""
INTEL_INCLUDES = "cpu,gpu"
"""An Intel Mac's package (`CPUs+GT+SA`) holds the CPU cores and the integrated GPU."""

#: A measured interval beyond this is not a sampling interval.
MAX_ELAPSED_S = 86_400.0

_HEADER = re.compile(
    r"^\*\*\* (?P<kind>Sampled|Summary) system activity \((?P<date>[^)]*)\) "
    r"\((?P<ms>\d+(?:\.\d+)?)\s*ms elapsed\) \*\*\*\s*$"
)
_DATE = re.compile(r"^(?P<t>\w{3} \w{3} +\d{1,2} \d{1,2}:\d{2}:\d{2} \d{4})(?: (?P<zone>\S+))?$")
#: polars regex of a power line (the text is stripped first)
_POWER = (
    r"^(?P<label>[A-Za-z][^:]*?[Pp]ower[^:]*?)\s*:\s*(?P<value>\d+(?:\.\d+)?)\s*"
    r"(?P<unit>mW|W)\s*$"
)


def sniff(head: bytes) -> bool:
    return (
        b"*** Sampled system activity" in head
        or b"*** Summary system activity" in head
        or (head.startswith(b"Machine model:") and b"OS version:" in head)
    )


@dataclass
class _Sample:
    line: int
    header: datetime | None
    """The header's time, UTC, to the second (None when unreadable)."""
    interval: float | None
    kind: str
    """`sample`, `summary` (an aggregate) or `unreadable` (a header that cannot be read:
    its lines belong to no sample)."""
    end: datetime | None = None


def read(
    data: bytes, *, name: str, local_utc_offset: str | None = None, **_: Any
) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "powermetrics", "format": "text", "timestamps": True}
    if too_large(data, MAX_LOG_BYTES, log, "The powermetrics log"):
        return Read(None, log.faults(), meta)
    decoded = decode(data, log)
    if decoded is None:
        return Read(None, log.faults(), meta)
    text, meta["encoding"] = decoded
    frame = text_frame(text)
    head = frame["text"].head(20).to_list()
    for key in ("Machine model", "OS version"):
        hit = next((ln.split(":", 1)[1].strip() for ln in head if ln.startswith(key + ":")), None)
        if hit:
            meta[key.lower().replace(" ", "_")] = hit
    # every header of the file (two logs joined into one show two)
    meta["identity"] = identity.of_machines(
        frame.filter(pl.col("text").str.starts_with("Machine model:"))["text"]
        .str.split_exact(":", 1)
        .struct.field("field_1")
        .to_list()
    )

    samples = _samples(frame, log, local_utc_offset, meta)
    readings = _readings(frame, samples, log)
    if frame.height:
        missing_line_end(text, [""] * (frame.height - 1) + [frame["text"][-1]], log)
    timed = [s for s in samples if s.kind == "sample"]
    meta["samples"] = len(timed)
    _anchor(timed, meta)
    meta["summary_blocks"] = [
        {
            "line": s.line,
            "elapsed_ms": round((s.interval or 0) * 1000, 3),
            "readings_w": {
                r["label"]: r["watts"]
                for r in readings.filter(pl.col("sample_line") == s.line).iter_rows(named=True)
            },
        }
        for s in samples
        if s.kind == "summary"
    ]
    readings = readings.filter(pl.col("sample_line").is_in([s.line for s in timed]))
    counts = dict(readings.group_by("sample_line").len().iter_rows())
    for s in timed:
        if s.line not in counts:
            log.warning(
                "This sample holds no power line (was the cpu_power sampler on?).",
                kind="empty",
                line=s.line,
            )
    with_power = [s for s in timed if s.line in counts]
    meta["samples_with_power"] = len(with_power)
    if len(with_power) > 1 and counts[with_power[-1].line] < max(
        counts[s.line] for s in with_power[:-1]
    ):
        log.warning(
            "The last sample has fewer power lines than the others: the file may be cut short.",
            kind="truncated",
            line=with_power[-1].line,
        )
    meta["units"] = sorted(set(readings["unit"].to_list()))
    if readings.is_empty():
        # say what the file holds: Sampled blocks without a power line (a task table), only
        # Summary blocks (aggregates), or no block at all
        why = (
            f" ({len(timed)} sample(s), none with a power line: only other samplers' "
            "output such as the task table; run powermetrics with --samplers "
            "cpu_power,gpu_power)."
            if timed
            else " (only Summary blocks, which are aggregates)."
            if samples
            else "."
        )
        log.error("No power reading in a sample: nothing to measure with" + why, kind="empty")
        return Read(None, log.faults(), meta)
    times = pl.DataFrame(
        {
            "sample_line": [s.line for s in timed],
            "end": [s.end for s in timed],
            "interval_s": [s.interval for s in timed],
        },
        schema={"sample_line": pl.Int64, "end": _frame.schema()["end"], "interval_s": pl.Float64},
    )
    _frame.order_faults(times.select("end", line="sample_line"), log, by=(), what="sample")
    built = readings.join(times, on="sample_line", how="left").with_columns(
        start=pl.col("end") - pl.duration(microseconds=(pl.col("interval_s") * 1e6).round()),
        domain=pl.col("label").replace_strict(DOMAINS, default="other"),
        energy_j=pl.col("watts") * pl.col("interval_s"),
        includes=pl.when(pl.col("label") == INTEL_PACKAGE).then(pl.lit(INTEL_INCLUDES)),
        source=pl.col("label"),
    )
    frame = _frame.conform(built.with_columns(device=pl.lit(None, pl.Int64)))
    _frame.snapshot_warning(frame, log)
    return Read(
        _frame.describe(frame, log, instrument="powermetrics", includes=SOC_INCLUDES),
        log.faults(),
        meta,
    )


def _samples(
    frame: pl.DataFrame, log: FaultLog, option: str | None, meta: dict[str, Any]
) -> list[_Sample]:
    """Every sample header, its time (UTC, to the second) and measured interval, parsed with
    polars; the faults of the headers that cannot be read, one by one."""
    heads = frame.filter(pl.col("text").str.starts_with("*** S")).with_columns(
        m=pl.col("text").str.extract_groups(_HEADER.pattern)
    )
    heads = heads.with_columns(
        kind=pl.col("m").struct.field("kind"),
        ms=pl.col("m").struct.field("ms").cast(pl.Float64, strict=False),
        d=pl.col("m").struct.field("date").str.strip_chars().str.extract_groups(_DATE.pattern),
    )
    heads = heads.with_columns(
        local=pl.col("d")
        .struct.field("t")
        .str.replace_all(r"\s+", " ")
        .str.to_datetime("%a %b %d %H:%M:%S %Y", time_unit="us", strict=False),
        zone=pl.col("d").struct.field("zone"),
    )
    offsets = {z: parse_utc_offset(z) for z in heads["zone"].drop_nulls().unique().to_list()}
    meta["header_zones"] = sorted(
        z or "" for z in set(heads.filter(pl.col("kind").is_not_null())["zone"].to_list())
    )
    aware = heads["zone"].replace_strict(
        {z: o is not None for z, o in offsets.items()}, default=False, return_dtype=pl.Boolean
    )
    assumed = timedelta(0)
    needs_option = heads.filter(pl.col("local").is_not_null() & ~aware)
    if needs_option.height:
        assumed, tz_meta = local_offset(option, log, tool="This powermetrics log")
        meta.update(tz_meta)
    shift = heads["zone"].replace_strict(
        {z: o for z, o in offsets.items() if o is not None},
        default=assumed,
        return_dtype=pl.Duration("us"),
    )
    heads = heads.with_columns(shift=shift)
    samples: list[_Sample] = []
    for i, raw, kind, ms, local, off in heads.select(
        "line", "text", "kind", "ms", "local", "shift"
    ).iter_rows():
        if kind is None:
            log.warning(
                "A sample header that cannot be read: the sample is skipped.",
                kind="syntax",
                line=i,
                value=raw,
            )
            samples.append(_Sample(i, None, None, "unreadable"))
            continue
        header = to_utc(local, off) if local is not None else None
        if header is None:
            log.error(
                "The sample header's date cannot be read: the sample has no time.",
                kind="type",
                line=i,
                value=raw[raw.find("(") + 1 : raw.find(")")],
            )
        elapsed: float | None = ms / 1000 if ms is not None else None
        if elapsed is None or not 0 < elapsed <= MAX_ELAPSED_S:
            log.error(
                f"The sample's measured interval ({ms} ms) is not a sampling "
                "interval: its readings have no interval and no energy.",
                kind="type",
                line=i,
                value=ms,
            )
            elapsed = None
        samples.append(_Sample(i, header, elapsed, "summary" if kind == "Summary" else "sample"))
    return samples


def _readings(frame: pl.DataFrame, samples: list[_Sample], log: FaultLog) -> pl.DataFrame:
    """Every power line with the line of the sample header above it (`sample_line`), one per
    label and sample (the first), in watts."""
    starts = pl.DataFrame(
        {"sample_line": [s.line for s in samples]}, schema={"sample_line": pl.Int64}
    )
    power = (
        frame.with_columns(pl.col("text").str.strip_chars())
        .filter(pl.col("text").str.contains("ower", literal=True))
        .with_columns(m=pl.col("text").str.extract_groups(_POWER))
        .filter(pl.col("m").struct.field("label").is_not_null())
        .select(
            "line",
            label=pl.col("m").struct.field("label"),
            value=pl.col("m").struct.field("value"),
            unit=pl.col("m").struct.field("unit"),
            raw=pl.col("text"),
        )
    )
    power = power.sort("line").join_asof(
        starts.sort("sample_line"), left_on="line", right_on="sample_line", strategy="backward"
    )
    for line, raw in (
        power.filter(pl.col("sample_line").is_null()).select("line", "raw").iter_rows()
    ):
        log.warning(
            "A power line outside any sample: skipped.", kind="syntax", line=line, value=raw
        )
    scale = pl.when(pl.col("unit") == "mW").then(1e-3).otherwise(1.0)
    power = power.filter(pl.col("sample_line").is_not_null()).with_columns(
        watts=pl.col("value").cast(pl.Float64, strict=False) * scale
    )
    first = pl.struct("sample_line", "label").is_first_distinct()
    kept = power.filter(first)
    again = power.filter(~first).join(
        kept.select("sample_line", "label", kept_line="line", kept_w="watts"),
        on=["sample_line", "label"],
    )
    for r in again.filter(pl.col("watts") != pl.col("kept_w")).iter_rows(named=True):
        log.warning(
            f"{r['label']} appears twice in the sample of line {r['sample_line']} with "
            f"different values: line {r['kept_line']} ({r['kept_w']:g} W) is kept.",
            kind="duplicate",
            line=r["line"],
            field=r["label"],
        )
    return kept.select("line", "sample_line", "label", "unit", "watts")


def _anchor(samples: list[_Sample], meta: dict[str, Any]) -> None:
    """Each sample's `end`: its header's second plus the measured intervals (the module's
    rule), run by run. `lo`/`hi` bound the anchor (seconds after the run's first header, less
    the run's first interval) for which every header of the run reads its sample's end."""
    runs, widest = 0, 0.0
    run: list[_Sample] = []
    base: datetime | None = None
    done = lo = hi = 0.0

    def close() -> None:
        nonlocal widest
        elapsed = 0.0
        for s in run:
            elapsed += s.interval or 0.0
            s.end = base + timedelta(seconds=lo + elapsed) if base else None
        if run:
            widest = max(widest, hi - lo)

    for s in samples:
        if s.header is None:
            close()
            run, base, s.end = [], None, None
            continue
        step = s.interval or 0.0
        if run and base is not None:
            h = (s.header - base).total_seconds()
            new_lo, new_hi = max(lo, h - done - step), min(hi, h + 1 - done - step)
            if new_lo < new_hi:
                run.append(s)
                done, lo, hi = done + step, new_lo, new_hi
                continue
            close()
        runs += 1
        run, base, done = [s], s.header, step
        # the first sample's end lies in [header, header + 1)
        lo, hi = -step, 1 - step
    close()
    meta["time_runs"] = runs
    meta["time_uncertainty_s"] = round(widest, 6) if runs else None


READER = EvidenceReader(INFO, rank=130, sniff=sniff, read=read, doc=__doc__ or "")
