"""Which reader takes an evidence file: every power and placement reader in one table, and
the choice by content (the first `HEAD_BYTES` only, never the whole file) and extension.

Each reader module exposes `INFO` (a `ReaderInfo`), `sniff(head) -> bool` and
`read(data, *, name, **options) -> Read`. Readers are tried in the order below, most specific
first (JSON records named by their `format`, then formats with a signature, then the CSVs
told apart by their header); when several recognize a file, one whose usual extensions
include the file's wins. A file no reader recognizes gets no reader.
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import PurePath
from types import ModuleType
from typing import Any

from auditor.readers._common import HEAD_BYTES, FaultLog
from auditor.readers.base import Read

#: Reader modules, in the order they are tried.
MODULES: tuple[str, ...] = (
    "auditor.readers.placement.windows_ml",
    "auditor.readers.placement.ort_record",
    "auditor.readers.placement.torch_record",
    "auditor.readers.placement.onnxruntime_profile",
    "auditor.readers.power.powermetrics_plist",
    "auditor.readers.power.nvidia_smi_xml",
    "auditor.readers.power.runner_jsonl",
    "auditor.readers.power.nvidia_smi_bundle",
    "auditor.readers.power.nvidia_smi_q",
    "auditor.readers.power.nvidia_smi_dmon",
    "auditor.readers.power.nvidia_smi_table",
    "auditor.readers.power.nvidia_smi_c2c",
    "auditor.readers.power.powermetrics_text",
    "auditor.readers.power.hwinfo",
    "auditor.readers.power.nvidia_smi_csv",
    "auditor.readers.placement.coreml_profiling_csv",
    "auditor.readers.placement.coreml_compute_plan",
    "auditor.readers.placement.coreml_profiling_text",
)


@cache
def readers() -> tuple[ModuleType, ...]:
    return tuple(importlib.import_module(m) for m in MODULES)


def names() -> list[str]:
    return [r.INFO.name for r in readers()]


def by_name(name: str) -> ModuleType | None:
    return next((r for r in readers() if r.INFO.name == name), None)


def choose(head: bytes, filename: str) -> ModuleType | None:
    """The reader for a file whose first bytes are `head` (at most `HEAD_BYTES` are looked at)."""
    head = head[:HEAD_BYTES]
    matches = []
    for r in readers():
        try:
            if r.sniff(head):
                matches.append(r)
        except Exception:  # a sniffer that chokes on odd bytes just does not recognize them
            continue
    if not matches:
        return None
    ext = PurePath(filename).suffix.lower()
    return next((r for r in matches if ext in r.INFO.extensions), matches[0])


def read(data: bytes, name: str, *, reader: str | None = None, **options: Any
         ) -> tuple[ModuleType | None, Read[Any]]:
    """Choose a reader (or take the one named) and read `data`; a file no reader takes is a
    `format` fault, never an exception."""
    module = by_name(reader) if reader else choose(data[:HEAD_BYTES], name)
    if module is None:
        log = FaultLog(name)
        if reader:
            log.error(f"No reader is named {reader!r}; readers: {', '.join(names())}.",
                      kind="format")
        else:
            log.error("No evidence reader recognizes this file (power: powermetrics, HWiNFO, "
                      "nvidia-smi, runner JSONL; placement: ONNX Runtime profile, Core ML, "
                      "Windows ML, runner records).", kind="format", line=1)
        return None, Read(None, log.faults(), {})
    return module, module.read(data, name=name, **options)
