"""Our runner's own power trace (`power/<policy_id>/trial-<n>.jsonl`): one
`schemas/runner-power-record.schema.json` record a line, NVML and RAPL read in-process.

- `sample` records (NVML POWER_INSTANT / POWER_AVERAGE / nvmlDeviceGetPowerUsage): one row
  each, `end` = `t`, `watts` as read, `source` = `<source>:<field>` (`nvml:POWER_INSTANT`);
  `interval_s` is the time since the previous reading of the same source, domain and device
  (`start` = end - interval, null for the first). No energy: these are point or rolling
  readings.
- `counter` records (NVML total energy in mJ, RAPL energy_uj in uJ): consecutive readings of
  one (source, field, domain, device) become one row each, from the previous reading
  (`start`) to this one (`end`): `energy_j` = the counter delta in J, `watts` = energy /
  interval. A counter's range is the instrument's documented width
  (schemas/conventions.json `counter_widths`), never the record's: RAPL's is the
  one its driver reports (the record's `max_range`), NVML's total energy 2^64 mJ. A counter
  that went down wrapped at that range when the wrapped delta (value + range - previous) is
  energy a device can draw over the interval (a `wrap` is counted in `meta["wraps"]`). Only
  one wrap per interval can be seen: a counter polled less often than it wraps (seconds to
  minutes under load) loses whole ranges without a trace. A decrease the range cannot
  explain, or of a counter without a documented range, is a reset (NVML: driver reload): a
  `reset` error and no row for that interval.
- `device` records (the boards NVML reads: name, UUID, serial) are what the trace names of
  its machine (`meta["identity"]`).
- `marker` records go to `meta["markers"]` ({event, t, label, line}); `unavailable` records to
  `meta["unavailable"]` ({source, reason, t, line}). Nothing is invented for them: no zero.

Every record is checked against the schema: the usual way is vectorized (polars reads the
lines, the schema's required fields, enums and minimums are checked per column); a file
polars cannot read as a whole (a cut or malformed line, a wrong type) is read line by line
with the schema's own validator, each bad line a fault naming it, the others kept.
"""

from __future__ import annotations

import json
from datetime import timedelta
from functools import cache
from typing import Any

import polars as pl

import schemas
from auditor.readers import identity
from auditor.readers._common import (
    MAX_LOG_BYTES,
    EvidenceReader,
    FaultLog,
    ReaderInfo,
    decode,
    split_lines,
    to_utc_expr,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.power import _frame

INFO = ReaderInfo(
    name="runner-jsonl",
    family="power",
    tool="our runner (NVML, RAPL)",
    extensions=(".jsonl",),
    description="gpubench runner power trace (runner-power-record JSON lines)",
)

_SCALE = {"mJ": 1e-3, "uJ": 1e-6}
_TYPES = {"string": pl.String, "number": pl.Float64, "integer": pl.Int64}
_INT64_MAX = 2**63 - 1


@cache
def _record_schema() -> tuple[dict[str, Any], pl.Schema]:
    doc = schemas.load("runner_power_record")
    cols = {}
    for name, prop in doc["properties"].items():
        types = prop.get("type", "string")
        types = [t for t in (types if isinstance(types, list) else [types]) if t != "null"]
        cols[name] = _TYPES.get(types[0] if types else "string", pl.String)
    return doc, pl.Schema(cols)


def sniff(head: bytes) -> bool:
    first = head.lstrip().split(b"\n", 1)[0]
    return (
        first.startswith(b"{")
        and b'"kind"' in first
        and any(
            k in first
            for k in (b'"sample"', b'"counter"', b'"marker"', b'"unavailable"', b'"device"')
        )
    )


def read(data: bytes, *, name: str, **_: Any) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {
        "tool": "gpubench runner",
        "format": "runner-power-jsonl",
        "timestamps": True,
        "units": ["W", "mJ", "uJ"],
    }
    if too_large(data, MAX_LOG_BYTES, log, "The power trace"):
        return Read(None, log.faults(), meta)
    records = _records(data, log)
    if records is None:
        return Read(None, log.faults(), meta)
    records = _checked(records, log)
    meta["records"] = records.height
    meta["markers"] = [
        {"event": r["event"], "t": r["t"], "label": r["label"], "line": r["line"]}
        for r in records.filter(pl.col("kind") == "marker").iter_rows(named=True)
    ]
    meta["unavailable"] = [
        {"source": r["source"], "reason": r["reason"], "t": r["t"], "line": r["line"]}
        for r in records.filter(pl.col("kind") == "unavailable").iter_rows(named=True)
    ]
    meta["t_source"] = sorted(records["t_source"].fill_null("host").unique().to_list())
    meta["identity"] = identity.Identity(
        gpus=identity.gpus_of(
            records.filter((pl.col("kind") == "device") & (pl.col("source") == "nvml"))
            .select("name", "uuid", "serial")
            .iter_rows(named=True)
        )
    )
    samples = _samples(records)
    counters = _counters(records, log, meta)
    frame = _frame.conform(pl.concat([samples, counters]).sort("line"))
    if frame.is_empty():
        why = "; ".join(f"{u['source']}: {u['reason']}" for u in meta["unavailable"])
        log.error(
            "No power sample or energy counter reading"
            + (f" (unavailable: {why})." if why else "."),
            kind="empty",
        )
        return Read(None, log.faults(), meta)
    _frame.order_faults(
        frame.filter(pl.col("energy_j").is_null()),
        log,
        by=("source", "domain", "device"),
        what="sample",
    )
    frame = _frame.drop_repeats(frame, log, key=("end", "device", "domain"), what="record")
    _frame.snapshot_warning(frame, log)
    return Read(describe(frame, log), log.faults(), meta)


def _records(data: bytes, log: FaultLog) -> pl.DataFrame | None:
    """Every record as a row of the schema's columns plus `line`, read by polars when the
    file is clean, else line by line with faults for the bad lines."""
    _, cols = _record_schema()
    if b"\n\n" not in data and not data.startswith(b"\n") and b"\r" not in data:
        try:
            df = pl.read_ndjson(data, schema=cols)
        except Exception:  # any polars parse error: read line by line instead
            pass
        else:
            return df.with_columns(line=pl.int_range(1, df.height + 1, dtype=pl.Int64))
    decoded = decode(data, log, encodings=("utf-8",), what="The power trace")
    if decoded is None:
        return None
    validator = schemas.validator("runner_power_record")
    good: list[dict[str, Any]] = []
    for i, raw in enumerate(split_lines(decoded[0]), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError as exc:
            log.error(
                f"Not a JSON object ({getattr(exc, 'msg', exc)}): the line is left out.",
                kind="syntax",
                line=i,
                column=getattr(exc, "colno", None),
                value=raw,
            )
            continue
        except RecursionError:  # nested deeper than the parser's stack: no runner record is
            log.error(
                "A value nested too deeply to be a runner record: the line is left out.",
                kind="syntax",
                line=i,
            )
            continue
        error = next(iter(sorted(validator.iter_errors(obj), key=lambda e: list(e.path))), None)
        if (
            error is None
            and isinstance(obj, dict)
            and any(
                isinstance(obj.get(k), int) and obj[k] > _INT64_MAX for k in ("value", "max_range")
            )
        ):
            log.error(
                "A counter value is beyond 64 bits: the line is left out.",
                kind="type",
                line=i,
                value=raw,
            )
            continue
        if error is not None:
            pointer = "/" + "/".join(map(str, error.absolute_path))
            log.error(
                f"Not a runner power record: {error.message}.",
                kind="schema",
                line=i,
                pointer=pointer,
                value=raw,
            )
            continue
        good.append({**{k: obj.get(k) for k in cols}, "line": i})
    return pl.DataFrame(good, schema={**cols, "line": pl.Int64})


def _checked(df: pl.DataFrame, log: FaultLog) -> pl.DataFrame:
    """`df` with `end` (t parsed, UTC) and without the records that break the schema's
    required fields, enums, minimums or date-time format: one fault per such record."""
    doc, _ = _record_schema()
    # our runner writes `...T10:00:00.000000Z`: that format first, inference for the rest
    fast = pl.col("t").str.to_datetime(
        "%Y-%m-%dT%H:%M:%S%.f%#z", time_unit="us", time_zone="UTC", strict=False
    )
    df = df.with_columns(end=fast)
    if df.select((pl.col("end").is_null() & pl.col("t").is_not_null()).any()).item():
        inferred = pl.col("t").str.to_datetime(time_unit="us", time_zone="UTC", strict=False)
        df = df.with_columns(end=pl.coalesce("end", inferred))
    df = df.with_columns(end=to_utc_expr(pl.col("end").dt.replace_time_zone(None), timedelta(0)))
    checks: list[tuple[pl.Expr, str, str]] = [
        (pl.col(f).is_null(), f, f"lacks `{f}`") for f in doc["required"]
    ]
    for rule in doc.get("allOf", []):
        kind = rule["if"]["properties"]["kind"]["const"]
        checks += [
            ((pl.col("kind") == kind) & pl.col(f).is_null(), f, f"is a {kind} record without `{f}`")
            for f in rule["then"]["required"]
        ]
    for f, prop in doc["properties"].items():
        if "enum" in prop:
            allowed = [v for v in prop["enum"] if v is not None]
            checks.append(
                (
                    pl.col(f).is_not_null() & ~pl.col(f).is_in(allowed),
                    f,
                    f"has `{f}` outside {allowed}",
                )
            )
        if "minimum" in prop:
            checks.append((pl.col(f) < prop["minimum"], f, f"has `{f}` below {prop['minimum']}"))
        if prop.get("type") == "number":
            checks.append((~pl.col(f).is_finite(), f, f"has a `{f}` that is not finite"))
        if prop.get("minLength"):
            checks.append((pl.col(f).str.len_chars() < prop["minLength"], f, f"has an empty `{f}`"))
    checks.append(
        (
            pl.col("t").is_not_null() & pl.col("end").is_null(),
            "t",
            "has a `t` that is not an RFC 3339 date-time (in a plausible year)",
        )
    )
    if not df.select(
        pl.any_horizontal([bad.fill_null(False) for bad, _, _ in checks]).any()
    ).item():
        return df  # the usual case: every record is whole
    problem = pl.coalesce(
        [pl.when(bad.fill_null(False)).then(pl.lit(f"{f}\x1f{msg}")) for bad, f, msg in checks]
    )
    df = df.with_columns(problem=problem)
    bad = df.filter(pl.col("problem").is_not_null())
    for line, text in bad.select("line", "problem").iter_rows():
        field, msg = text.split("\x1f", 1)
        log.error(f"The record {msg}: it is left out.", kind="schema", line=line, field=field)
    return df.filter(pl.col("problem").is_null()).drop("problem")


def _documented_range(c: pl.DataFrame) -> pl.Series:
    """Each counter record's documented range in its own unit
    (schemas/conventions.json `counter_widths`, by `<source>:<field>`, else by
    `<source>`): 2^bits of the documented unit, or the driver's own (the record's
    `max_range`) where the documentation says the driver reports it; null where nothing is
    documented (a decrease is then a reset)."""
    widths = schemas.convention("B", "counter_widths")
    out: list[float | int | None] = []
    for source, field, unit, declared in c.select(
        "source", "field", "unit", "max_range"
    ).iter_rows():
        doc = widths.get(f"{source}:{field}") or widths.get(source)
        if doc is None:
            out.append(None)
        elif doc.get("driver_reported"):
            out.append(declared)
        elif unit in _SCALE and doc.get("unit") in _SCALE:
            out.append(2 ** doc["bits"] * _SCALE[doc["unit"]] / _SCALE[unit])
        else:
            out.append(None)
    return pl.Series("max_range", out, dtype=pl.Float64)


AVERAGED_FIELDS = ("POWER_AVERAGE", "nvmlDeviceGetPowerUsage")
"""NVML sample fields that are rolling averages over about 1 s (what `power.draw` reads),
not instantaneous readings."""


def describe(frame: pl.DataFrame, log: FaultLog) -> pl.DataFrame:
    """FRAME's readings as our runner records them: each counter is the energy of its
    instrument (`nvml:...`, `rapl:...`), each power sample only a cross-check of the counter
    beside it (the runner's contract: a window's energy is its counters'), instantaneous
    samples first; RAPL's psys zone is the SoC's platform power, not a discrete GPU's."""
    # a trace holds a handful of `<source>:<field>` names: look each one up once
    sources = frame["source"].unique().to_list()
    instrument = {s: s.split(":", 1)[0] for s in sources}
    field = {s: s.split(":", 1)[1] if ":" in s else None for s in sources}
    counter = pl.col("energy_j").is_not_null()
    return _frame.describe(
        frame,
        log,
        instrument=pl.col("source").replace_strict(instrument),
        includes={"psys": "cpu,npu"},
        kind=pl.when(counter).then(pl.lit("counter")).otherwise(pl.lit("interval")),
        role=pl.when(counter).then(pl.lit("energy")).otherwise(pl.lit("check")),
        rank=pl.col("source").replace_strict(
            {s: 0 if f == "POWER_INSTANT" else 1 for s, f in field.items()}, return_dtype=pl.Int64
        ),
        averaging_s=pl.col("source").replace_strict(
            {s: 1.0 if f in AVERAGED_FIELDS else None for s, f in field.items()},
            return_dtype=pl.Float64,
        ),
    )


def _samples(df: pl.DataFrame) -> pl.DataFrame:
    samples = df.filter(pl.col("kind") == "sample").select(
        "end",
        "domain",
        "device",
        "watts",
        "line",
        source=pl.concat_str("source", pl.lit(":"), "field"),
    )
    return _frame.with_point_intervals(_frame.conform(samples), by=("source", "domain", "device"))


def _counters(df: pl.DataFrame, log: FaultLog, meta: dict[str, Any]) -> pl.DataFrame:
    series = ["source", "field", "domain", "device"]
    c = df.filter(pl.col("kind") == "counter").sort("line")
    prev = {n: pl.col(n).shift(1).over(series, order_by="line") for n in ("value", "end")}
    c = c.with_columns(
        prev_value=prev["value"], start=prev["end"], declared_range=pl.col("max_range")
    )
    # the range is the instrument's documented width, never the one a record declares
    c = c.with_columns(max_range=_documented_range(c))
    scale = pl.col("unit").replace_strict(_SCALE, default=None, return_dtype=pl.Float64)
    raw_delta = pl.col("value") - pl.col("prev_value")
    interval = (pl.col("end") - pl.col("start")).dt.total_microseconds() / 1e6
    # a wrap explains a decrease only when the energy it implies is one a device can draw
    # over the interval (the bound `_frame.screen` puts on every reading)
    wrapped_delta = raw_delta.cast(pl.Float64) + pl.col("max_range").cast(pl.Float64)
    plausible = wrapped_delta * scale <= _frame.MAX_WATTS * pl.max_horizontal(
        interval.fill_null(1.0), pl.lit(1.0)
    )
    wrapped = (raw_delta < 0) & pl.col("max_range").is_not_null() & plausible
    c = c.with_columns(
        wrapped=wrapped,
        delta=pl.when(wrapped).then(raw_delta + pl.col("max_range")).otherwise(raw_delta),
        interval_s=interval,
    )
    for r in c.filter(pl.col("delta") < 0).iter_rows(named=True):
        if r["max_range"] is not None:
            why = (
                f"a wrap at its documented range ({r['max_range']:g} {r['unit']}) would be "
                "more energy than any device draws over the interval"
            )
        elif r["declared_range"] is not None:
            why = (
                f"the record declares a wrap range ({r['declared_range']} {r['unit']}), but "
                "this counter has no documented width that wraps"
            )
        else:
            why = "without a wrap range"
        log.error(
            f"The {r['source']} counter {r['field']} went down from {r['prev_value']} to "
            f"{r['value']}, {why}: a reset (driver reload?); no energy for this "
            "interval.",
            kind="reset",
            line=r["line"],
            field=r["field"],
        )
    for r in c.filter(
        pl.col("max_range").is_not_null() & (pl.col("value") > pl.col("max_range"))
    ).iter_rows(named=True):
        log.error(
            f"The counter value {r['value']} is beyond its max_range {r['max_range']}.",
            kind="type",
            line=r["line"],
            field=r["field"],
        )
    for r in c.filter(pl.col("interval_s") <= 0).iter_rows(named=True):
        back = r["interval_s"] < 0
        log.warning(
            f"This counter reading is {'earlier than' if back else 'at the time of'} "
            "the previous one of its series: no power for this interval.",
            kind="order" if back else "repeat",
            line=r["line"],
        )
    meta["wraps"] = int(c["wrapped"].fill_null(False).sum())
    good = c.filter(pl.col("delta") >= 0).with_columns(
        energy_j=pl.col("delta") * pl.col("unit").replace_strict(_SCALE, return_dtype=pl.Float64)
    )
    return _frame.conform(
        good.select(
            "start",
            "end",
            "domain",
            "device",
            "energy_j",
            "line",
            wrap_j=pl.col("max_range")
            * pl.col("unit").replace_strict(_SCALE, return_dtype=pl.Float64),
            interval_s=pl.when(pl.col("interval_s") > 0).then(pl.col("interval_s")),
            watts=pl.when(pl.col("interval_s") > 0).then(pl.col("energy_j") / pl.col("interval_s")),
            source=pl.concat_str("source", pl.lit(":"), "field"),
        )
    )


READER = EvidenceReader(INFO, rank=70, sniff=sniff, read=read, doc=__doc__ or "")
