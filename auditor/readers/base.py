"""The reader contract: bytes in, one documented frame (or document) out, faults as data.

A reader never judges a run: it says what the file holds and where it could not read it.
Rules and derivations compare what readers return. Every reader module exposes one function

    read(data: bytes, *, name: str, **options) -> Read

`name` is the file's path as the caller wants it cited (relative to the run dir inside a
run, the path the user gave for `audit evidence`). A reader never raises on bad input: a
truncated file, a wrong encoding, a missing column or an impossible value becomes a `Fault`
naming the file and the line (column, field or JSON pointer where one applies), and every
good record of the file is still returned and counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, Literal, TypeVar

T = TypeVar("T")

FaultSeverity = Literal["error", "warning"]


@dataclass(frozen=True)
class Fault:
    """One thing a reader could not read, or read with a caveat, at one place of one file."""

    file: str
    """The file, as the caller named it."""
    message: str
    """One sentence: what is wrong there."""
    line: int | None = None
    """1-based physical line (or record number for binary streams), where one applies."""
    column: int | None = None
    """1-based character column in that line, where known."""
    field: str | None = None
    """The CSV column / named field at fault, where one applies."""
    pointer: str | None = None
    """RFC 6901 JSON pointer inside a JSON document, where one applies."""
    severity: FaultSeverity = "error"
    """`error`: the record (or file) is not usable; `warning`: read, with a caveat."""
    kind: str = "format"
    """A short stable tag: `encoding`, `syntax`, `schema`, `header`, `type`, `units`,
    `duplicate`, `truncated`, `limit`, `gap`, `reset`, `order` (time going back), `repeat`
    (a reading at the time of the previous one), `empty`, `format`; the
    evidence readers add `missing` (a tool's no-value cells, counted), `timezone` (local
    times read without a known offset) and `coverage` (a file that cannot show which window
    it covers: no times, or one sample per device)."""
    value: str | None = None
    """The offending text, shortened, where it helps the reader of the message."""
    row: int | None = None
    """1-based data row of a table (header excluded), where one applies."""


@dataclass(frozen=True)
class Read(Generic[T]):
    """What a reader made of one file."""

    value: T | None
    """The frame or document; None when nothing usable could be read."""
    faults: tuple[Fault, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """What the reader learnt about the file itself (tool, format version, units, device
    names, sample counts): facts about the file, never a verdict."""

    @property
    def errors(self) -> tuple[Fault, ...]:
        return tuple(f for f in self.faults if f.severity == "error")

    @property
    def usable(self) -> bool:
        return self.value is not None


def json_pointer(path: Any) -> str:
    """RFC 6901 pointer of a path of keys and indexes (`""` for the whole document)."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else ""


def shorten(value: Any, limit: int = 200) -> Any:
    """VALUE itself when its JSON text is short, else the start of that text."""
    import json

    s = json.dumps(value, default=str)
    return value if len(s) <= limit else s[:limit] + "..."


def utf8_fault(data: bytes, exc: UnicodeDecodeError, name: str) -> Fault:
    """The fault of bytes that are not UTF-8, at the line where the first bad byte is."""
    line = data.count(b"\n", 0, exc.start) + 1
    return Fault(
        name,
        f"not valid UTF-8 (byte {exc.start})",
        line=line,
        kind="encoding",
        value=repr(data[exc.start : exc.start + 4]),
    )
