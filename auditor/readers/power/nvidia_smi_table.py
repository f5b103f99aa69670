"""nvidia-smi's default table (plain `nvidia-smi`): recognized so that `audit evidence` can
say what it is, and refused as power evidence.

The table is a one-off display: one snapshot, a time to the second on its first line, power
rounded to whole watts (`432W /  700W`), made for a terminal. It is not a power log: the
reader returns no frame, one `format` error saying how to log power instead, and what the
table shows in `meta["readings"]` (GPU, name, watts, cap) so the user sees it was read.
"""

from __future__ import annotations

import re
from typing import Any

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

INFO = ReaderInfo(
    name="nvidia-smi-table",
    family="power",
    tool="nvidia-smi",
    extensions=(".txt", ".log"),
    description="nvidia-smi default table (a display, not a power log: refused)",
)

_GPU = re.compile(r"^\|\s+(?P<gpu>\d+)\s+(?P<name>.+?)\s+(?:On|Off)\s+\|")
_PWR = re.compile(r"(?P<w>\d+)W\s*/\s*(?P<cap>\d+)W")

ADVICE = (
    "log power with `nvidia-smi --query-gpu=timestamp,index,power.draw.instant,"
    "power.draw.average --format=csv -lms 100` (or `nvidia-smi -q -x -l 1`)"
)


def sniff(head: bytes) -> bool:
    return b"| NVIDIA-SMI " in head and b"Driver Version:" in head and b"+----" in head


def read(data: bytes, *, name: str, **_: Any) -> Read[None]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "nvidia-smi", "format": "default-table", "timestamps": False}
    if too_large(data, MAX_LOG_BYTES, log, "The file") or (decoded := decode(data, log)) is None:
        return Read(None, log.faults(), meta)
    lines = split_lines(decoded[0])
    meta["snapshot_time"] = lines[0].strip() if lines else None
    readings, gpu = [], None
    for i, raw in enumerate(lines, start=1):
        if m := _GPU.match(raw):
            gpu = {"gpu": int(m["gpu"]), "name": m["name"].strip(), "line": i}
        elif gpu and (m := _PWR.search(raw)):
            readings.append({**gpu, "watts": float(m["w"]), "cap_w": float(m["cap"]), "line": i})
            gpu = None
    meta["readings"] = readings
    log.error(
        "This is nvidia-smi's default table: a one-off display (one snapshot, power "
        "rounded to whole watts, no per-sample times), not a power log. To measure, "
        + ADVICE
        + ".",
        kind="format",
        line=1,
    )
    return Read(None, log.faults(), meta)


READER = EvidenceReader(INFO, rank=110, sniff=sniff, read=read, doc=__doc__ or "")
