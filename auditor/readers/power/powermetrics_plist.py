"""macOS `powermetrics -f plist` output: one XML property list per sample; a stream of many
samples has a NUL byte between documents.

Per document: `timestamp` (a UTC `<date>` to the second, when the sample was taken: `end`),
`elapsed_ns` (the measured interval: `interval_s`, `start` = end - interval) and the
`processor` dictionary, where power is in mW and energy in mJ:

| key | domain | energy_j from |
| --- | --- | --- |
| processor.cpu_power | cpu | processor.cpu_energy |
| processor.gpu_power | gpu | processor.gpu_energy |
| processor.ane_power | ane | processor.ane_energy |
| processor.combined_power | combined | watts x interval (no energy key) |
| processor.package_power (Intel, older macOS) | package | processor.package_energy, else |
| | | watts x interval |

Two GPU energies exist: `processor.gpu_energy` (the cpu_power sampler, consistent with
`processor.gpu_power` x elapsed) and `gpu.gpu_energy` (the gpu_power sampler); they can differ
by about 1%. `processor.gpu_energy` is used; the largest relative difference seen is kept in
`meta["gpu_energy_max_rel_diff"]`.

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

from auditor.readers._common import (
    MAX_DOCUMENT_BYTES,
    EvidenceReader,
    FaultLog,
    ReaderInfo,
    line_of_offset,
    to_utc,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.power import _frame

INFO = ReaderInfo(
    name="powermetrics-plist", family="power", tool="powermetrics",
    extensions=(".plist", ".xml"),
    description="macOS powermetrics -f plist output (NUL-separated property lists)")

#: processor key -> (domain, energy key or None)
FIELDS = {
    "cpu_power": ("cpu", "cpu_energy"),
    "gpu_power": ("gpu", "gpu_energy"),
    "ane_power": ("ane", "ane_energy"),
    "combined_power": ("combined", None),
    "package_power": ("package", "package_energy"),
}

_PLIST_HEAD = re.compile(rb"^[\s\x00]*(<\?xml[^>]*>\s*)?(<!DOCTYPE plist|<plist)")


SOC_INCLUDES = {"package": "ane,cpu,gpu", "combined": "ane,cpu,gpu"}
"""powermetrics' package (Apple silicon, and Intel's `CPUs+GT+SA`) and combined power hold
the CPU, the GPU and the Neural Engine: a window sums one of them alone, never with the GPU
line beside it."""


def sniff(head: bytes) -> bool:
    return bool(_PLIST_HEAD.match(head)) and (
        b"elapsed_ns" in head or b"hw_model" in head or b"processor" in head)


def read(data: bytes, *, name: str, **_: Any) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "powermetrics", "format": "plist", "timestamps": True,
                            "units": ["mW", "mJ"], "gpu_energy_field": "processor.gpu_energy"}
    if too_large(data, MAX_DOCUMENT_BYTES, log, "The powermetrics plist stream"):
        return Read(None, log.faults(), meta)
    rows: list[dict[str, Any]] = []
    documents = 0
    diffs: list[float] = []
    offset = 0
    for chunk in data.split(b"\x00"):
        start, offset = offset, offset + len(chunk) + 1
        if not chunk.strip():
            continue
        documents += 1
        line = line_of_offset(data, start + len(chunk) - len(chunk.lstrip()))
        try:
            doc = plistlib.loads(chunk, fmt=plistlib.FMT_XML)
        except Exception as exc:  # plistlib raises several types on bad input
            log.error(f"Sample document {documents} is not a readable property list "
                      f"({type(exc).__name__}: {exc}).", kind="syntax", line=line)
            continue
        rows.extend(_rows(doc, line, documents, log, meta, diffs))
    meta["documents"] = documents
    meta["samples"] = len({r["line"] for r in rows})
    if diffs:
        meta["gpu_energy_max_rel_diff"] = round(max(diffs), 6)
    if not rows:
        log.error("No sample with a power reading in the file.", kind="empty")
        return Read(None, log.faults(), meta)
    frame = _frame.from_rows(rows)
    _frame.order_faults(frame, log, by=(), what="sample")
    _frame.snapshot_warning(frame, log)
    return Read(_frame.describe(frame, instrument="powermetrics", includes=SOC_INCLUDES),
                log.faults(), meta)


def _rows(doc: Any, line: int, index: int, log: FaultLog, meta: dict[str, Any],
          diffs: list[float]) -> list[dict[str, Any]]:
    if not isinstance(doc, dict):
        log.error(f"Sample document {index} is not a dictionary.", kind="schema", line=line)
        return []
    for key in ("hw_model", "kern_osversion"):
        if isinstance(doc.get(key), str):
            meta.setdefault(key, doc[key])
    stamp, elapsed, proc = doc.get("timestamp"), doc.get("elapsed_ns"), doc.get("processor")
    problems = [k for k, ok in (("timestamp", isinstance(stamp, datetime)),
                                ("elapsed_ns", _number(elapsed) and elapsed > 0),
                                ("processor", isinstance(proc, dict))) if not ok]
    if problems:
        log.error(f"Sample document {index} lacks a usable {', '.join(problems)}: skipped.",
                  kind="schema", line=line, field=problems[0])
        return []
    # plistlib gives naive datetimes for <date>, which plists write in UTC
    end = to_utc(stamp, timedelta(0))
    if end is None:
        log.error(f"Sample document {index} has an implausible timestamp: skipped.",
                  kind="type", line=line, field="timestamp", value=stamp)
        return []
    interval = elapsed / 1e9
    rows = []
    for key, (domain, energy_key) in FIELDS.items():
        if key not in proc:
            continue
        if not _number(proc[key]) or proc[key] < 0:
            log.error(f"processor.{key} is not a power in mW.", kind="type", line=line,
                      field=f"processor.{key}", value=proc[key])
            continue
        watts = proc[key] / 1000
        energy = proc.get(energy_key) if energy_key else None
        energy_j = energy / 1000 if _number(energy) else watts * interval
        rows.append({"start": end - timedelta(seconds=interval), "end": end,
                     "interval_s": interval, "domain": domain, "watts": watts,
                     "energy_j": energy_j, "source": f"processor.{key}", "line": line})
    gpu = doc.get("gpu")
    alt = gpu.get("gpu_energy") if isinstance(gpu, dict) else None
    if _number(alt) and _number(proc.get("gpu_energy")) and max(alt, proc["gpu_energy"]) > 0:
        diffs.append(abs(alt - proc["gpu_energy"]) / max(alt, proc["gpu_energy"]))
    if not rows:
        log.warning(f"Sample document {index} holds no processor power key.", kind="empty",
                    line=line)
    return rows


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


READER = EvidenceReader(INFO, rank=50, sniff=sniff, read=read, doc=__doc__ or "")
