"""`nvidia-smi c2c -s` (chip-to-chip link status, Grace Hopper): recognized so that
`audit evidence` can say what it is, and refused: it holds link speeds, not power.
The link count per GPU is kept in `meta["gpus"]`."""

from __future__ import annotations

import re
from typing import Any

from auditor.readers._common import (
    EvidenceReader,
    FaultLog,
    ReaderInfo,
    decode,
    split_lines,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.power.nvidia_smi_table import ADVICE

INFO = ReaderInfo(
    name="nvidia-smi-c2c",
    family="power",
    tool="nvidia-smi",
    extensions=(".txt", ".log"),
    description="nvidia-smi c2c -s link status (not power evidence: refused)",
)

_GPU = re.compile(rb"^GPU \d+: .*\(UUID: GPU-", re.M)


def sniff(head: bytes) -> bool:
    return bool(_GPU.search(head)) and b"C2C Link" in head


def read(data: bytes, *, name: str, **_: Any) -> Read[None]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "nvidia-smi", "format": "c2c", "timestamps": False}
    if too_large(data, 1 << 20, log, "The file") or (decoded := decode(data, log)) is None:
        return Read(None, log.faults(), meta)
    gpus: dict[str, int] = {}
    current = None
    for raw in split_lines(decoded[0]):
        if m := re.match(r"^GPU (\d+):", raw):
            current = m[1]
            gpus[current] = 0
        elif current is not None and "C2C Link" in raw:
            gpus[current] += 1
    meta["gpus"] = [{"gpu": int(g), "links": n} for g, n in gpus.items()]
    log.error(
        "This is nvidia-smi c2c output (chip-to-chip link speeds): not power evidence. "
        "To measure, " + ADVICE + ".",
        kind="format",
        line=1,
    )
    return Read(None, log.faults(), meta)


READER = EvidenceReader(INFO, rank=120, sniff=sniff, read=read, doc=__doc__ or "")
