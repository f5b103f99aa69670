"""What every evidence reader shares: a fault log bound to one file, text decoding with the
encodings real tools write, physical lines, size limits and UTC offsets.

One place for each of these, so two readers never disagree on what a line number, an
encoding fallback or a missing time zone means.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import polars as pl

import schemas
from auditor.readers.base import Fault, FaultSeverity

#: A JSON or XML document is parsed whole into Python objects: anything larger is refused.
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
#: A line-oriented log (CSV, text) is read with polars or line by line: far larger is fine,
#: but a file beyond this is not a trial's trace and is refused before any work.
MAX_LOG_BYTES = 1024 * 1024 * 1024
#: Faults of one kind on one field beyond this many are counted in one closing fault, so a
#: bad column in a one-hour log gives a readable report, not 36,000 lines.
MAX_FAULTS_PER_GROUP = 20
#: How much of a file the registry looks at to tell formats apart.
HEAD_BYTES = 64 * 1024


class FaultLog:
    """Faults of one file, collected while reading it, with repeats capped per group."""

    def __init__(self, file: str) -> None:
        self.file = file
        self._faults: list[Fault] = []
        self._counts: Counter[tuple[str, str | None, FaultSeverity]] = Counter()
        self._first_dropped: dict[tuple[str, str | None, FaultSeverity], Fault] = {}

    def add(
        self,
        severity: FaultSeverity,
        message: str,
        *,
        kind: str = "format",
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
        pointer: str | None = None,
        value: Any = None,
    ) -> None:
        key = (kind, field, severity)
        self._counts[key] += 1
        fault = Fault(
            file=self.file,
            message=message,
            line=line,
            column=column,
            field=field,
            pointer=pointer,
            severity=severity,
            kind=kind,
            value=shorten(value),
        )
        if self._counts[key] <= MAX_FAULTS_PER_GROUP:
            self._faults.append(fault)
        else:
            self._first_dropped.setdefault(key, fault)

    def error(self, message: str, **where: Any) -> None:
        self.add("error", message, **where)

    def warning(self, message: str, **where: Any) -> None:
        self.add("warning", message, **where)

    def faults(self) -> tuple[Fault, ...]:
        closing = []
        for key, first in self._first_dropped.items():
            more = self._counts[key] - MAX_FAULTS_PER_GROUP
            kind, field, severity = key
            closing.append(
                Fault(
                    file=self.file,
                    line=first.line,
                    field=field,
                    severity=severity,
                    kind=kind,
                    message=f"{more} more {kind} fault(s) like the ones above"
                    f"{f' in {field}' if field else ''}, the first at line {first.line}"
                    " (not listed one by one).",
                )
            )
        return (*self._faults, *closing)


def shorten(value: Any, limit: int = 80) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def too_large(data: bytes, limit: int, log: FaultLog, what: str) -> bool:
    """True (and a `limit` fault) when `data` is beyond what a reader of `what` accepts."""
    if len(data) <= limit:
        return False
    log.error(
        f"{what} of {len(data):,} bytes is over the reader's limit of {limit:,} bytes: not read.",
        kind="limit",
    )
    return True


_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def utf16_without_bom(data: bytes) -> str | None:
    """`utf-16-le` or `utf-16-be` when `data` (no byte-order mark) looks like UTF-16 text: in
    its first KiB nearly every odd (LE) or even (BE) byte is NUL and nearly no other one, as
    in mostly-ASCII text written as UTF-16; None otherwise (binary data, an 8-bit text)."""
    head = data[:1024]
    half = len(head) // 2
    if half < 2:
        return None
    even, odd = head[0::2].count(0), head[1::2].count(0)
    if odd >= 0.9 * half and even < 0.1 * half:
        return "utf-16-le"
    if even >= 0.9 * half and odd < 0.1 * half:
        return "utf-16-be"
    return None


def text_encoding(data: bytes) -> tuple[str | None, int]:
    """The encoding a byte-order mark (or UTF-16's NUL pattern) decides, and the mark's
    length: (`utf-8-sig` | `utf-16-le` | `utf-16-be`, 3 | 2 | 0); (None, 0) when neither."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom)
    utf16 = utf16_without_bom(data)
    return (utf16, 0) if utf16 else (None, 0)


def head_as_utf8(head: bytes) -> bytes:
    """The first bytes of a file as UTF-8 without a byte-order mark, for the readers' content
    sniffers: a UTF-16 head (a Windows PowerShell 5.1 redirect) is transcoded; others are
    returned as they are."""
    name, skip = text_encoding(head)
    if name is None:
        return head
    body = head[skip:]
    if name.startswith("utf-16") and len(body) % 2:
        body = body[:-1]  # the head may end inside a character
    return body.decode("utf-8" if name == "utf-8-sig" else name, "replace").encode("utf-8")


def decode(
    data: bytes,
    log: FaultLog,
    *,
    encodings: tuple[str, ...] = ("utf-8", "cp1252"),
    what: str = "The file",
) -> tuple[str, str] | None:
    """The text of `data` and the encoding that read it (`utf-8`, `utf-8-sig`, `utf-16-le`,
    `utf-16-be`, `cp1252`; `+replace` when bytes had to be replaced): the readers put it in
    `meta["encoding"]`.

    - A byte-order mark decides: UTF-8 (its mark dropped), UTF-16 LE or BE (Windows
      PowerShell 5.1 writes UTF-16 LE with a mark when a command's output is redirected with
      `>`). Bytes the marked encoding cannot decode are replaced, with an `encoding`
      warning: a marked file is never read in another code page, which would garble every
      non-ASCII name.
    - No mark, but UTF-16's NUL pattern (every other byte NUL): read as UTF-16 LE or BE, with
      a warning that the mark is missing. Other NUL bytes mean binary data: refused.
    - Otherwise `encodings` are tried strictly in turn (UTF-8, then cp1252, the code page
      Windows tools such as HWiNFO write); when none fits, the last is applied with
      replacement characters and a warning. U+FFFD already in the text is a warning too
      (the tool, or a copy, lost characters such as the degree sign)."""
    marked, skip = text_encoding(data)
    if marked is not None:
        codec = "utf-8" if marked == "utf-8-sig" else marked
        body = data[skip:]
        try:
            text = body.decode(codec)
        except UnicodeDecodeError as exc:
            text = body.decode(codec, errors="replace")
            at = line_of_offset(text, text.index("\ufffd")) if "\ufffd" in text else 1
            log.warning(
                f"{what} is {marked} but holds bytes that are not ({exc.reason}): they "
                "were replaced.",
                kind="encoding",
                line=at,
            )
            return text, marked + "+replace"
        if not skip:
            log.warning(
                f"{what} is {marked} without a byte-order mark (detected by its NUL bytes).",
                kind="encoding",
                line=1,
            )
        _warn_replacement(text, log, what)
        return text, marked
    if b"\x00" in data[:HEAD_BYTES]:
        log.error(
            f"{what} holds NUL bytes: binary data, not text.",
            kind="encoding",
            line=line_of_offset(data, data.index(b"\x00")),
        )
        return None
    for enc in encodings:
        try:
            text = data.decode(enc)
        except UnicodeDecodeError:
            continue
        _warn_replacement(text, log, what)
        return text, enc
    text = data.decode(encodings[-1], errors="replace")
    first = text.index("\ufffd")
    log.warning(
        f"{what} is not valid in {' or '.join(encodings)}: undecodable bytes were replaced.",
        kind="encoding",
        line=text.count("\n", 0, first) + 1,
    )
    return text, encodings[-1] + "+replace"


def _warn_replacement(text: str, log: FaultLog, what: str) -> None:
    first = text.find("\ufffd")
    if first >= 0:
        log.warning(
            f"{what} holds {text.count(chr(0xFFFD))} U+FFFD replacement character(s): "
            "characters (such as the degree sign) were already lost before this read.",
            kind="encoding",
            line=text.count("\n", 0, first) + 1,
        )


def line_of_offset(data: bytes | str, offset: int) -> int:
    if isinstance(data, bytes):
        return data.count(b"\n", 0, offset) + 1
    return data.count("\n", 0, offset) + 1


def split_lines(text: str) -> list[str]:
    """Physical lines (LF or CRLF), without their ends; a final line end adds no empty line.

    `str.splitlines` is not used: it also breaks on form feeds and Unicode separators, which
    would shift every line number after them."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def line_endings(text: str) -> str:
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    return "crlf" if crlf and not lf else "lf" if lf and not crlf else "mixed" if crlf else "none"


_OFFSET = re.compile(r"^(?:(?P<z>Z|UTC|GMT)|(?P<sign>[+-])(?P<h>\d{2}):?(?P<m>\d{2}))$")


def parse_utc_offset(text: str) -> timedelta | None:
    """ "+01:00", "-0530", "Z" or "UTC" as a timedelta; None when it is not one of these."""
    m = _OFFSET.match(text.strip())
    if m is None:
        return None
    if m["z"]:
        return timedelta(0)
    hours, minutes = int(m["h"]), int(m["m"])
    if hours > 23 or minutes > 59:
        return None
    delta = timedelta(hours=hours, minutes=minutes)
    return -delta if m["sign"] == "-" else delta


def format_utc_offset(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def local_offset(
    option: str | None, log: FaultLog, *, tool: str
) -> tuple[timedelta, dict[str, Any]]:
    """The UTC offset to apply to a log of local times without a zone, and what was assumed.

    Without `option` (the manifest's `local_utc_offset`) UTC is assumed and said, as a
    `timezone` warning: every time of the file may be off by the machine's offset."""
    if option is None:
        log.warning(
            f"{tool} logs local times without a zone and no local_utc_offset was "
            "given: UTC is assumed, so every time may be off by the machine's offset.",
            kind="timezone",
        )
        return timedelta(0), {"local_utc_offset": None, "timezone_assumed": "UTC"}
    delta = parse_utc_offset(option)
    if delta is None:
        log.error(
            f"local_utc_offset {option!r} is not an offset like +01:00: UTC is assumed.",
            kind="timezone",
            value=option,
        )
        return timedelta(0), {"local_utc_offset": None, "timezone_assumed": "UTC"}
    return delta, {"local_utc_offset": format_utc_offset(delta), "timezone_assumed": None}


_FRAME_TYPES = {"number": pl.Float64, "integer": pl.Int64, "string": pl.String}


@cache
def frame_schema(kind: str) -> pl.Schema:
    """The polars schema (column order included) of a frame kind of `schemas.FRAME_FILES`."""
    cols: dict[str, pl.DataType | type[pl.DataType]] = {}
    for f in schemas.frame(kind)["fields"]:
        if f["type"] == "datetime":
            cols[f["name"]] = pl.Datetime(f["unit"], f["time_zone"])
        else:
            cols[f["name"]] = _FRAME_TYPES[f["type"]]
    return pl.Schema(cols)


@dataclass(frozen=True)
class ReaderInfo:
    """What the registry (`auditor.readers.evidence_kinds`) needs to know of a reader."""

    name: str
    """Stable reader name, e.g. `powermetrics-text`; `audit evidence --reader` takes it."""
    family: str
    """`power` or `placement`: which frame the reader returns."""
    tool: str
    """The tool that writes the format, e.g. `powermetrics`, `nvidia-smi`, `our runner`."""
    extensions: tuple[str, ...]
    """File name endings the format usually has (lower case, with the dot)."""
    description: str
    """One line: the format and how it is produced."""


@dataclass(frozen=True)
class EvidenceReader:
    """One evidence reader as its registry (`auditor.readers.evidence_kinds`) finds it: each
    module of `auditor.readers.power` and `auditor.readers.placement` declares one as
    `READER`. Readers are tried in `rank` order, most specific first (JSON records named by
    their `format`, then formats with a signature, then the CSVs told apart by header)."""

    info: ReaderInfo
    rank: int
    """Its place in the order readers are tried (lower first)."""
    sniff: Callable[[bytes], bool]
    """Whether the first bytes of a file are this reader's format (False for b"")."""
    read: Callable[..., Any]
    """`read(data, *, name, **options) -> Read`."""
    doc: str = ""
    """The module's docstring: the format, versions and the tool's name -> domain table."""

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def family(self) -> str:
        return self.info.family

    @property
    def tool(self) -> str:
        return self.info.tool

    @property
    def extensions(self) -> tuple[str, ...]:
        return self.info.extensions

    @property
    def description(self) -> str:
        return self.info.description


def missing_line_end(text: str, lines: list[str], log: FaultLog) -> None:
    """A warning when the last line has no line end, with what it holds: often a cut file."""
    if text and not text.endswith("\n") and lines:
        log.warning(
            "The file does not end with a line end: its last line may be cut short.",
            kind="truncated",
            line=len(lines),
            value=lines[-1],
        )


def line_frame(lines: list[str], first_line: int) -> pl.DataFrame:
    """`lines` as a frame of `text` and `line` (numbered from `first_line`), for readers
    that filter and split lines with polars."""
    return pl.DataFrame({"text": lines}, schema={"text": pl.String}).with_columns(
        line=pl.int_range(first_line, first_line + len(lines), dtype=pl.Int64)
    )


def text_frame(text: str, first_line: int = 1) -> pl.DataFrame:
    """The physical lines of `text` (as `split_lines` cuts them: LF or CRLF, a final line end
    adds no line) as a frame of `text` and `line`, split by polars: for logs of many lines,
    where a Python list of them costs more than reading them."""
    frame = (
        pl.DataFrame({"text": [text]}, schema={"text": pl.String})
        .select(pl.col("text").str.split("\n"))
        .explode("text")
    )
    if "\r" in text:
        frame = frame.with_columns(pl.col("text").str.strip_suffix("\r"))
    frame = frame.with_columns(line=pl.int_range(first_line, first_line + pl.len(), dtype=pl.Int64))
    if text.endswith("\n") or not text:
        frame = frame.slice(0, frame.height - 1)
    return frame


def csv_rows(
    body: pl.DataFrame, *, width: int, picked: list[int], names: list[str], log: FaultLog
) -> pl.DataFrame:
    """The `picked` fields (renamed `names`, as text) of the unquoted comma-separated rows in
    `body` (`text`, `line`: see `line_frame`), plus `line`, read with polars; a row with
    another number of fields than `width` is a fault naming its line (`truncated` when it has
    fewer: usually a cut last line).

    For logs whose tool never quotes a data cell (HWiNFO, nvidia-smi): counting commas is
    then exact, and vectorized."""
    body = body.with_columns(fields=pl.col("text").str.count_matches(",", literal=True) + 1)
    for r in body.filter(pl.col("fields") != width).iter_rows(named=True):
        cut = r["fields"] < width
        log.error(
            f"Row has {r['fields']} fields where the header has {width}: not read"
            f"{' (cut short?)' if cut else ''}.",
            kind="truncated" if cut else "syntax",
            line=r["line"],
            value=r["text"],
        )
    good = body.filter(pl.col("fields") == width)
    if good.is_empty():
        return pl.DataFrame(schema={**dict.fromkeys(names, pl.String), "line": pl.Int64})
    joined = good.select(pl.col("text").str.join("\n")).item()
    cells = pl.read_csv(
        joined.encode(), has_header=False, columns=picked, infer_schema=False, quote_char=None
    )
    cells.columns = names
    return cells.with_columns(line=good["line"])


#: Times outside these years are not a benchmark's (and some cannot even be Python
#: datetimes): a reader treats them as unreadable.
PLAUSIBLE_YEARS = (1990, 2199)
_EARLIEST = datetime(PLAUSIBLE_YEARS[0], 1, 1)
_LATEST = datetime(PLAUSIBLE_YEARS[1], 12, 31, 23, 59, 59)


def to_utc(local: datetime, offset: timedelta) -> datetime | None:
    """A naive local time shifted by its UTC offset, as an aware UTC time; None when it is
    outside PLAUSIBLE_YEARS."""
    if not _EARLIEST <= local <= _LATEST:
        return None
    return (local - offset).replace(tzinfo=UTC)


def to_utc_expr(local: pl.Expr, offset: timedelta) -> pl.Expr:
    """`to_utc` for a polars column of naive local times (null outside PLAUSIBLE_YEARS)."""
    inside = local.is_between(pl.lit(_EARLIEST), pl.lit(_LATEST))
    return pl.when(inside).then(local - pl.lit(offset)).dt.replace_time_zone("UTC")
