"""`nvidia-smi -q` plain text (one report), or `nvidia-smi -q -l N` (reports one after the
other, each opened by `==============NVSMI LOG==============`).

A report gives `Timestamp : Tue Jul 14 08:12:53 2026` (local, to the second, no zone: `end`,
with the manifest's `local_utc_offset`), then one block per GPU (`GPU 00000000:00:09.0`) in
index order (`device` = position). Indentation nests sections: the power sections and
readings of `_nvsmi` (`GPU Power Readings` > `Average Power Draw`, `Instantaneous Power
Draw`; older drivers `Power Readings` > `Power Draw`; `GPU Memory Power Readings`, `Module
Power Readings`). `source` is `section/label` as written, e.g. `GPU Power Readings/Average
Power Draw`; `N/A` is no reading.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from auditor.readers._common import (
    MAX_LOG_BYTES,
    EvidenceReader,
    FaultLog,
    ReaderInfo,
    decode,
    split_lines,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.power import _nvsmi

INFO = ReaderInfo(
    name="nvidia-smi-q",
    family="power",
    tool="nvidia-smi",
    extensions=(".txt", ".log"),
    description="nvidia-smi -q report(s) (plain text)",
)

_BANNER = "NVSMI LOG"
#: GPU block labels kept in meta["devices"], under the keys the XML reader uses too.
_INFO = {
    "Product Name": "name",
    "Minor Number": "minor_number",
    "GPU UUID": "uuid",
    "Serial Number": "serial",
}
_KV = re.compile(r"^(?P<key>\S.*?)\s+: ?(?P<value>.*)$")
_GPU = re.compile(r"^GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\s*$")


def sniff(head: bytes) -> bool:
    return b"==NVSMI LOG==" in head


def read(
    data: bytes, *, name: str, local_utc_offset: str | None = None, first_line: int = 1, **_: Any
) -> Read[pl.DataFrame]:
    """`first_line`: the line number of `data`'s first line (a section of a larger file)."""
    log = FaultLog(name)
    meta: dict[str, Any] = {
        "tool": "nvidia-smi",
        "format": "q-text",
        "timestamps": True,
        "units": ["W"],
    }
    if too_large(data, MAX_LOG_BYTES, log, "The nvidia-smi -q log"):
        return Read(None, log.faults(), meta)
    decoded = decode(data, log)
    if decoded is None:
        return Read(None, log.faults(), meta)
    text, meta["encoding"] = decoded
    snapshots = _snapshots(split_lines(text), first_line)
    frame = _nvsmi.snapshot_frame(
        snapshots, log, meta, local_utc_offset, lambda r: f"{r.section}/{r.name}"
    )
    return Read(frame, log.faults(), meta)


def _snapshots(lines: list[str], first_line: int) -> list[_nvsmi.Snapshot]:
    snaps: list[_nvsmi.Snapshot] = []
    gpu: _nvsmi.Gpu | None = None
    stack: list[tuple[int, str]] = []
    for i, raw in enumerate(lines, start=first_line):
        content = raw.strip()
        if not content:
            continue
        if _BANNER in content and content.startswith("="):
            snaps.append(_nvsmi.Snapshot(line=i))
            gpu, stack = None, []
            continue
        if not snaps:
            continue
        snap, indent = snaps[-1], len(raw) - len(raw.lstrip(" "))
        if indent == 0:
            gpu, stack = None, []
            if m := _GPU.match(content):
                gpu = _nvsmi.Gpu(line=i, info={"bus_id": m["bus"]})
                snap.gpus.append(gpu)
            elif m := _KV.match(content):
                if m["key"] == "Timestamp":
                    snap.line, snap.stamp = i, m["value"].strip()
                elif m["key"] == "Attached GPUs":
                    snap.attached = m["value"].strip()
            continue
        if gpu is None:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        m = _KV.match(content)
        if m is None:
            stack.append((indent, content))
        elif stack:
            gpu.readings.append(_nvsmi.Reading(stack[-1][1], m["key"], m["value"], i))
        elif m["key"] in _INFO:
            gpu.info[_INFO[m["key"]]] = m["value"].strip()
    return snaps


READER = EvidenceReader(INFO, rank=90, sniff=sniff, read=read, doc=__doc__ or "")
