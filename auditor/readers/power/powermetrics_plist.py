"""macOS `powermetrics -f plist` output: one XML property list per sample; a stream of many
samples has a NUL byte after each document.

Per document: `timestamp` (a UTC `<date>` to the second, when the sample was taken: `end`),
`elapsed_ns` (the measured interval: `interval_s`, `start` = end - interval), and the figures
of the samplers that ran:

| key | unit | domain | includes | energy_j from |
| --- | --- | --- | --- | --- |
| processor.cpu_power | mW | cpu | cpu | processor.cpu_energy (mJ) |
| processor.gpu_power | mW | gpu | gpu | processor.gpu_energy (mJ) |
| processor.ane_power | mW | ane | ane | processor.ane_energy (mJ) |
| processor.combined_power | mW | combined | ane,cpu,gpu | watts x interval |
| processor.package_power (1) | mW | package | ane,cpu,gpu | processor.package_energy (mJ) |
| processor.package_watts (2) | W | package | cpu,gpu | processor.package_joules (J) |
| gpu.gpu_energy (3) | mJ | gpu | gpu | itself; watts = energy / interval |

(1) Apple silicon, older macOS; without its energy key, watts x interval. (2) Intel Macs:
CPUs, the integrated GT and the system agent. (3) The gpu_power sampler, read when the
document has no processor GPU reading (a stream of `--samplers gpu_power` alone).

- **Energies are per sample, not counters**: on every real file (Intel and Apple silicon,
  `is_delta` true or false) an energy field equals its power times `elapsed_ns` (Intel 2014:
  3.03713 W x 4.295788 s = 13.0469 J = `package_joules`; M1: 44.0773 mW x 2.019 s = 89 mJ =
  `cpu_energy`), so each is the interval's energy: `kind` `interval` with `energy_j`, never a
  cumulative `counter`. The largest relative difference between an energy and power x
  elapsed is `meta["energy_vs_power_max_rel_diff"]`.
- Two GPU energies exist on Apple silicon: `processor.gpu_energy` (the cpu_power sampler,
  consistent with `processor.gpu_power` x elapsed) and `gpu.gpu_energy` (the gpu_power
  sampler); they can differ by about 1%. `processor.gpu_energy` is used when present
  (`meta["gpu_energy_field"]` says which was used); the largest relative difference seen is
  `meta["gpu_energy_max_rel_diff"]`. A stream of the gpu_power sampler alone (no `processor`)
  is read from `gpu.gpu_energy`.
- A document without any power or energy key (a virtual machine's `processor` holds only
  `llc_flushed_ratio`; an unsupported model has no `processor` at all) is an `empty`
  warning naming the model; a file of such documents says why it holds no reading.
- A value that is not a finite, non-negative, plausible number (a 400-digit integer) is a
  fault, never a row (`_frame.screen`); an `elapsed_ns` that is not a positive number of at
  most a day skips its document.

`plistlib` refuses entity declarations, so a document cannot expand entities; a document or
stream over `MAX_DOCUMENT_BYTES` is refused. A document that does not parse is an error at
the line where it begins; the other documents of the stream are still read.
"""

from __future__ import annotations

import math
import plistlib
import re
from datetime import datetime, timedelta
from typing import Any

import polars as pl

from auditor.readers import identity
from auditor.readers._common import (
    MAX_DOCUMENT_BYTES,
    EvidenceReader,
    FaultLog,
    ReaderInfo,
    decode,
    line_of_offset,
    text_encoding,
    to_utc,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.power import _frame

INFO = ReaderInfo(
    name="powermetrics-plist",
    family="power",
    tool="powermetrics",
    extensions=(".plist", ".xml"),
    description="macOS powermetrics -f plist output (NUL-separated property lists)",
)

#: processor key -> (domain, power scale to W, energy key or None, energy scale to J,
#: the devices the reading holds)
FIELDS: dict[str, tuple[str, float, str | None, float, str]] = {
    "cpu_power": ("cpu", 1e-3, "cpu_energy", 1e-3, "cpu"),
    "gpu_power": ("gpu", 1e-3, "gpu_energy", 1e-3, "gpu"),
    "ane_power": ("ane", 1e-3, "ane_energy", 1e-3, "ane"),
    "combined_power": ("combined", 1e-3, None, 1e-3, "ane,cpu,gpu"),
    "package_power": ("package", 1e-3, "package_energy", 1e-3, "ane,cpu,gpu"),
    "package_watts": ("package", 1.0, "package_joules", 1.0, "cpu,gpu"),
}
#: A measured interval beyond this (one day) is not a sampling interval.
MAX_ELAPSED_NS = 86_400 * 10**9

_PLIST_HEAD = re.compile(rb"^[\s\x00]*(<\?xml[^>]*>\s*)?(<!DOCTYPE plist|<plist)")


def sniff(head: bytes) -> bool:
    return bool(_PLIST_HEAD.match(head)) and (
        b"elapsed_ns" in head or b"hw_model" in head or b"processor" in head
    )


def read(data: bytes, *, name: str, **_: Any) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {
        "tool": "powermetrics",
        "format": "plist",
        "timestamps": True,
        "units": ["mW", "mJ"],
    }
    if too_large(data, MAX_DOCUMENT_BYTES, log, "The powermetrics plist stream"):
        return Read(None, log.faults(), meta)
    encoding = text_encoding(data)[0]
    if encoding and encoding.startswith("utf-16"):
        # re-encoded after capture: its NUL bytes are UTF-16's, not the stream's separators
        decoded = decode(data, log, what="The powermetrics plist stream")
        if decoded is None:
            return Read(None, log.faults(), meta)
        data = decoded[0].encode("utf-8")
        meta["encoding"] = decoded[1]
    rows: list[dict[str, Any]] = []
    documents = 0
    stats: dict[str, Any] = {
        "gpu_diffs": [],
        "power_diffs": [],
        "gpu_fields": set(),
        "units": set(),
        "why_empty": [],
    }
    offset = 0
    for chunk in data.split(b"\x00"):
        start, offset = offset, offset + len(chunk) + 1
        if not chunk.strip():
            continue
        documents += 1
        line = line_of_offset(data, start + len(chunk) - len(chunk.lstrip()))
        if not chunk.lstrip().startswith(b"<"):
            log.error(
                f"Sample document {documents} does not begin with XML markup: not read.",
                kind="syntax",
                line=line,
                value=chunk[:40].decode("utf-8", "replace"),
            )
            continue
        try:
            doc = plistlib.loads(chunk, fmt=plistlib.FMT_XML)
        except Exception as exc:  # plistlib raises several types on bad input
            log.error(
                f"Sample document {documents} is not a readable property list "
                f"({type(exc).__name__}: {exc}).",
                kind="syntax",
                line=line,
            )
            continue
        rows.extend(_rows(doc, line, documents, log, meta, stats))
    meta["documents"] = documents
    meta["identity"] = identity.of_machines(meta.pop("hw_models", []))
    meta["samples"] = len({r["line"] for r in rows})
    if stats["units"]:
        meta["units"] = sorted(stats["units"])
    if stats["gpu_fields"]:
        fields = sorted(stats["gpu_fields"])
        meta["gpu_energy_field"] = fields[0] if len(fields) == 1 else fields
    if stats["gpu_diffs"]:
        meta["gpu_energy_max_rel_diff"] = round(max(stats["gpu_diffs"]), 6)
    if stats["power_diffs"]:
        meta["energy_vs_power_max_rel_diff"] = round(max(stats["power_diffs"]), 6)
    if not rows:
        why = f": {stats['why_empty'][0]}" if stats["why_empty"] else "."
        log.error(f"No sample with a power reading in the file{why}", kind="empty")
        return Read(None, log.faults(), meta)
    frame = _frame.from_rows(rows)
    _frame.order_faults(frame, log, by=(), what="sample")
    _frame.snapshot_warning(frame, log)
    return Read(_frame.describe(frame, log, instrument="powermetrics"), log.faults(), meta)


def _rows(
    doc: Any, line: int, index: int, log: FaultLog, meta: dict[str, Any], stats: dict[str, Any]
) -> list[dict[str, Any]]:
    if not isinstance(doc, dict):
        log.error(f"Sample document {index} is not a dictionary.", kind="schema", line=line)
        return []
    for key in ("hw_model", "kern_osversion"):
        if isinstance(doc.get(key), str):
            meta.setdefault(key, doc[key])
    if isinstance(doc.get("hw_model"), str):
        meta.setdefault("hw_models", []).append(doc["hw_model"])
    model = doc.get("hw_model") if isinstance(doc.get("hw_model"), str) else "not given"
    stamp, elapsed = doc.get("timestamp"), _value(doc.get("elapsed_ns"))
    proc = doc.get("processor") if isinstance(doc.get("processor"), dict) else None
    gpu = doc.get("gpu") if isinstance(doc.get("gpu"), dict) else None
    problems = [
        k
        for k, ok in (
            ("timestamp", isinstance(stamp, datetime)),
            ("elapsed_ns", elapsed is not None and 0 < elapsed <= MAX_ELAPSED_NS),
        )
        if not ok
    ]
    if problems:
        log.error(
            f"Sample document {index} lacks a usable {', '.join(problems)}: skipped.",
            kind="schema",
            line=line,
            field=problems[0],
        )
        return []
    assert isinstance(stamp, datetime)  # else a problem above
    # plistlib gives naive datetimes for <date>, which plists write in UTC
    end = to_utc(stamp, timedelta(0))
    if end is None:
        log.error(
            f"Sample document {index} has an implausible timestamp: skipped.",
            kind="type",
            line=line,
            field="timestamp",
            value=stamp,
        )
        return []
    assert elapsed is not None
    interval = elapsed / 1e9
    base = {
        "start": end - timedelta(seconds=interval),
        "end": end,
        "interval_s": interval,
        "line": line,
    }
    rows = []
    for key, (domain, scale, energy_key, escale, includes) in FIELDS.items():
        if proc is None or key not in proc:
            continue
        watts = _number(proc[key], f"processor.{key}", line, log)
        if watts is None:
            continue
        watts *= scale
        energy = (
            _number(proc[energy_key], f"processor.{energy_key}", line, log)
            if energy_key and energy_key in proc
            else None
        )
        energy_j = energy * escale if energy is not None else watts * interval
        if (
            energy is not None
            and math.isfinite(energy_j)
            and math.isfinite(watts)
            and max(energy_j, watts * interval) > 0
        ):
            stats["power_diffs"].append(
                abs(energy_j - watts * interval) / max(energy_j, watts * interval)
            )
        stats["units"].update(("W", "J") if scale == 1.0 else ("mW", "mJ"))
        if domain == "gpu":
            stats["gpu_fields"].add(f"processor.{energy_key}")
        rows.append(
            {
                **base,
                "domain": domain,
                "watts": watts,
                "energy_j": energy_j,
                "source": f"processor.{key}",
                "line": line,
                "includes": includes,
            }
        )
    alt = (
        _number(gpu["gpu_energy"], "gpu.gpu_energy", line, log)
        if gpu is not None and "gpu_energy" in gpu
        else None
    )
    own = _value(proc.get("gpu_energy")) if proc is not None else None
    if alt is not None and own is not None and max(alt, own) > 0:
        stats["gpu_diffs"].append(abs(alt - own) / max(alt, own))
    if alt is not None and not any(r["domain"] == "gpu" for r in rows):
        stats["gpu_fields"].add("gpu.gpu_energy")
        stats["units"].update(("mW", "mJ"))
        rows.append(
            {
                **base,
                "domain": "gpu",
                "watts": alt / 1e3 / interval,
                "energy_j": alt / 1e3,
                "source": "gpu.gpu_energy",
                "includes": "gpu",
            }
        )
    if not rows:
        if proc is None and gpu is None:
            why = (
                f"the documents hold neither the cpu_power nor the gpu_power sampler "
                f"(hw_model {model}): run powermetrics with --samplers cpu_power,gpu_power"
            )
        else:
            keys = sorted((proc or {}).keys()) + [f"gpu.{k}" for k in sorted((gpu or {}).keys())]
            why = (
                f"powermetrics reports no power on this machine (hw_model {model}: a virtual "
                f"machine, or a model without an energy model); the samplers' keys are "
                f"{', '.join(keys[:8])}{'...' if len(keys) > 8 else ''}"
            )
        stats["why_empty"].append(why)
        log.warning(
            f"Sample document {index} holds no power or energy key: {why}.", kind="empty", line=line
        )
    return rows


def _value(v: Any) -> float | None:
    """V as a float when it is a number (inf for an integer too large for a float); None
    when it is not a number at all."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    try:
        return float(v)
    except OverflowError:
        return math.inf


def _number(v: Any, field: str, line: int, log: FaultLog) -> float | None:
    """V as a float, or None with a `type` fault when it is no number (a non-finite or
    absurd number is passed on: `_frame.screen` faults it with its source)."""
    value = _value(v)
    if value is None:
        log.error(
            f"{field} is not a number: the reading is left out.",
            kind="type",
            line=line,
            field=field,
            value=v,
        )
    return value


READER = EvidenceReader(INFO, rank=50, sniff=sniff, read=read, doc=__doc__ or "")
