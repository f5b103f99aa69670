"""Which reader takes an evidence file: every power and placement reader, found by the
registries of `auditor.readers.power` and `auditor.readers.placement` (each module declares
`READER`, an `EvidenceReader`), and the choice by content (the first `HEAD_BYTES` only, never
the whole file) and extension.

Readers are tried in `rank` order, most specific first (JSON records named by their
`format`, then formats with a signature, then the CSVs told apart by their header); when
several recognize a file, one whose usual extensions include the file's wins. A file no
reader recognizes gets no reader. A new reader is one module (its `READER` and its rank)
with its real files and tests: nothing here changes.
"""

from __future__ import annotations

from functools import cache
from pathlib import PurePath
from typing import Any

from auditor.readers._common import HEAD_BYTES, EvidenceReader, FaultLog, head_as_utf8
from auditor.readers.base import Read
from auditor.registry import Registry, RegistryError


def _named_like_module(module: str, reader: EvidenceReader) -> None:
    if reader.name != module.replace("_", "-"):
        raise RegistryError(
            f"reader {reader.name!r} lives in {module}.py: a reader is named "
            "like its module, with dashes"
        )


POWER: Registry[EvidenceReader] = Registry(
    family="power reader",
    package="auditor.readers.power",
    attribute="READER",
    kind=EvidenceReader,
    key=lambda r: r.name,
    validate=_named_like_module,
)
PLACEMENT: Registry[EvidenceReader] = Registry(
    family="placement reader",
    package="auditor.readers.placement",
    attribute="READER",
    kind=EvidenceReader,
    key=lambda r: r.name,
    validate=_named_like_module,
)


@cache
def readers() -> tuple[EvidenceReader, ...]:
    """Every evidence reader, in the order they are tried."""
    return tuple(sorted((*POWER.all(), *PLACEMENT.all()), key=lambda r: (r.rank, r.name)))


def names() -> list[str]:
    return [r.name for r in readers()]


def by_name(name: str) -> EvidenceReader | None:
    return next((r for r in readers() if r.name == name), None)


def rank(name: str | None) -> int:
    """The place of reader NAME in the order readers are tried (unknown: last)."""
    r = by_name(name) if name else None
    return r.rank if r is not None else 1 << 30


def choose(head: bytes, filename: str) -> EvidenceReader | None:
    """The reader for a file whose first bytes are `head` (at most `HEAD_BYTES` are looked at).
    A head in UTF-16, or with a UTF-8 byte-order mark, is shown to the sniffers as plain
    UTF-8, so every text format is recognized whatever encoding wrote it."""
    head = head_as_utf8(head[:HEAD_BYTES])
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
    return next((r for r in matches if ext in r.extensions), matches[0])


def read(
    data: bytes, name: str, *, reader: str | None = None, **options: Any
) -> tuple[EvidenceReader | None, Read[Any]]:
    """Choose a reader (or take the one named) and read `data`; a file no reader takes is a
    `format` fault, never an exception."""
    module = by_name(reader) if reader else choose(data[:HEAD_BYTES], name)
    if module is None:
        log = FaultLog(name)
        if reader:
            log.error(
                f"No reader is named {reader!r}; readers: {', '.join(names())}.", kind="format"
            )
        else:
            log.error(
                "No evidence reader recognizes this file (power: powermetrics, HWiNFO, "
                "nvidia-smi, runner JSONL; placement: ONNX Runtime profile, Core ML, "
                "Windows ML, runner records).",
                kind="format",
                line=1,
            )
        return None, Read(None, log.faults(), {})
    try:
        return module, module.read(data, name=name, **options)
    except RecursionError:
        # a document nested deeper than any parser's stack (a JSON or plist bomb): a fault
        # of this file, never an internal error of the audit
        log = FaultLog(name)
        log.error(
            f"The file is nested too deeply for {module.description} to be read.",
            kind="syntax",
            line=1,
        )
        return module, Read(None, log.faults(), {})
