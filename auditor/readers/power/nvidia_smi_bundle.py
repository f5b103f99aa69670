"""nvidia_gpu_exporter capture bundles: many nvidia-smi command outputs in one file, each
section opened by a banner

    ################################################################################
    # load :: query-gpu (csv, what the exporter parses)
    # $ nvidia-smi --query-gpu=timestamp,... --format=csv
    ################################################################################

The bundle is not one trace: its power readings are snapshots of separate commands, taken
in an idle and a load state. The reader lists every section in `meta["sections"]` (title,
command, line, which reader took it) and reads the timed power sections with their own
readers: `--query-gpu ... --format=csv` (nvidia_smi_csv) and `-q` (nvidia_smi_q). `dmon`
sections have no times and are listed, not read; other sections hold no power. Lines and
faults point into the bundle (each sub-reader is told where its section begins). A
`format` warning says it is a bundle, not a trace.
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
from auditor.readers.power import _frame, nvidia_smi_csv, nvidia_smi_q

INFO = ReaderInfo(
    name="nvidia-smi-bundle",
    family="power",
    tool="nvidia-smi",
    extensions=(".txt",),
    description="nvidia_gpu_exporter capture bundle (many nvidia-smi outputs in one file)",
)

_RULE = re.compile(r"^#{40,}\s*$")
_TITLE = re.compile(r"^# (?P<title>.+? :: .+?)\s*$")
_COMMAND = re.compile(r"^# \$ (?P<cmd>.*)$")


def sniff(head: bytes) -> bool:
    return head.startswith(b"####") and (
        b"nvidia_gpu_exporter" in head or b"\n# $ nvidia-smi" in head
    )


def _reader_for(command: str) -> tuple[Any, str | None]:
    if "--query-gpu=" in command and "--format=csv" in command:
        return nvidia_smi_csv, None
    if re.search(r"nvidia-smi -q(\s|$)", command):
        return nvidia_smi_q, None
    if " dmon" in command:
        return None, "dmon writes no times: listed, not read"
    return None, "holds no power readings"


def read(
    data: bytes, *, name: str, local_utc_offset: str | None = None, **_: Any
) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {
        "tool": "nvidia-smi",
        "format": "capture-bundle",
        "timestamps": True,
        "units": ["W"],
    }
    if too_large(data, MAX_LOG_BYTES, log, "The capture bundle"):
        return Read(None, log.faults(), meta)
    decoded = decode(data, log)
    if decoded is None:
        return Read(None, log.faults(), meta)
    lines = split_lines(decoded[0])
    for ln in lines[:20]:
        if ln.startswith("collected_at:"):
            meta["collected_at"] = ln.split(":", 1)[1].strip()
    frames, faults, sections = [], [], []
    for title, command, first, body in _sections(lines):
        reader, why = _reader_for(command)
        entry: dict[str, Any] = {"title": title, "command": command[:120], "line": first}
        sections.append(entry)
        if reader is None:
            entry["read"] = why
            continue
        sub = reader.read(
            "\n".join(body).encode(), name=name, local_utc_offset=local_utc_offset, first_line=first
        )
        faults += [f for f in sub.faults if f.kind != "coverage"]
        entry["read"] = (
            f"{reader.INFO.name}: {sub.value.height if sub.value is not None else 0} readings"
        )
        if sub.value is not None:
            frames.append(sub.value)
            meta.update(
                {
                    k: v
                    for k, v in sub.meta.items()
                    if k in ("local_utc_offset", "timezone_assumed", "devices")
                }
            )
    meta["sections"] = sections
    log.warning(
        f"A capture bundle of {len(sections)} nvidia-smi outputs: its power readings "
        "are snapshots of separate commands (idle, load), not a trace of one window.",
        kind="format",
        line=1,
    )
    unique = list(dict.fromkeys(faults))  # each section repeats the time-zone warning
    if not frames:
        log.error("No section with timed power readings.", kind="empty")
        return Read(None, (*log.faults(), *unique), meta)
    frame = _frame.with_point_intervals(pl.concat(frames).sort("line"))
    return Read(frame, (*log.faults(), *unique), meta)


def _sections(lines: list[str]) -> list[tuple[str, str, int, list[str]]]:
    """(title, command, first body line, body lines) per bannered section."""
    out: list[tuple[str, str, int, list[str]]] = []
    i = 0
    while i < len(lines):
        if _RULE.match(lines[i]) and i + 1 < len(lines) and (t := _TITLE.match(lines[i + 1])):
            j = i + 2
            command = ""
            if j < len(lines) and (c := _COMMAND.match(lines[j])):
                command, j = c["cmd"], j + 1
            while j < len(lines) and not _RULE.match(lines[j]):
                j += 1
            start = j + 1  # past the closing rule
            end = start
            while end < len(lines) and not _RULE.match(lines[end]):
                end += 1
            body = lines[start:end]
            while body and not body[-1].strip():
                body.pop()
            out.append((t["title"], command, start + 1, body))
            i = end
        else:
            i += 1
    return out


READER = EvidenceReader(INFO, rank=80, sniff=sniff, read=read, doc=__doc__ or "")
