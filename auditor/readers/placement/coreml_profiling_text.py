"""Core ML per-operation backend selection as NSLog dumps (freedomtan/coreml_modelc_profling's
`without_compute_plan` tool): one log line per operation ending in `..., {`, then the
operation's dictionary in Foundation's description syntax, closed by `}` alone at the start
of a line:

    2024-08-03 09:09:29.128 tool[27490:461550] at .../analytics.mil:107:12, {
        BackendSupport = { ane = 1; "classic_cpu" = 1; "mps_graph" = 1; };
        DebugName = "ios17.conv:107:12";
        EstimatedRunTime = { ane = "0.0036"; "classic_cpu" = "0.0586"; "mps_graph" = "0.0140"; };
        OpIndex = 102;
        OpType = "ios17.conv";
        SelectedBackend = "\\"ane\\"";
        ...
    }

One row per dictionary: `node` = DebugName (as in the tool's CSV), `op_type` = OpType,
`provider` = SelectedBackend without its inner quotes, `device` normalized (ane -> ane;
bnns, classic_cpu -> cpu; mps_graph -> gpu), `cost` = EstimatedRunTime of the selected
backend (null, with a `missing` warning, when it has none), `line` = the line that opens the
dictionary. A dictionary that does not parse, or is not closed before the end of the file,
is an error naming its first line; the others are kept.
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
from auditor.readers.placement import _frame
from auditor.readers.placement.coreml_profiling_csv import row_cost

INFO = ReaderInfo(
    name="coreml-profiling-text",
    family="placement",
    tool="Core ML (E5RT profiling)",
    extensions=(".txt", ".log"),
    description="Core ML per-op SelectedBackend and EstimatedRunTime (NSLog dictionary dumps)",
)

_OPEN = re.compile(r", \{\s*$")
_MODEL = re.compile(r"the mlmodelc directory: (?P<path>\S+)")
_TOKEN = re.compile(
    r'\s*(?:(?P<punct>[{}()=;,])|"(?P<q>(?:[^"\\]|\\.)*)"|(?P<bare>[^\s{}()=;,"]+))'
)
#: Nesting deeper than this is not an operation's dictionary.
MAX_DEPTH = 32


def sniff(head: bytes) -> bool:
    return b"SelectedBackend = " in head or (
        b"BackendSupport =" in head and b"EstimatedRunTime =" in head
    )


def read(data: bytes, *, name: str, **_: Any) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {"tool": "Core ML", "format": "profiling NSLog text"}
    if too_large(data, MAX_LOG_BYTES, log, "The profiling log"):
        return Read(None, log.faults(), meta)
    decoded = decode(data, log)
    if decoded is None:
        return Read(None, log.faults(), meta)
    lines = split_lines(decoded[0])
    rows: list[dict[str, Any]] = []
    i = 0
    while i < len(lines):
        if m := _MODEL.search(lines[i]):
            meta["model"] = m["path"]
        if not _OPEN.search(lines[i]):
            i += 1
            continue
        start = i
        end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "}"), None)
        if end is None:
            log.error(
                "An operation's dictionary is not closed before the end of the file "
                "(cut short?): left out.",
                kind="truncated",
                line=start + 1,
            )
            break
        text = "{" + "\n".join(lines[start + 1 : end]) + "\n}"
        try:
            op = _parse(text)
        except ValueError as exc:
            log.error(
                f"An operation's dictionary cannot be read ({exc}): left out.",
                kind="syntax",
                line=start + 1,
            )
        else:
            if row := _row(op, start + 1, log):
                rows.append(row)
        i = end + 1
    meta["operations"] = len(rows)
    meta["backends"] = sorted({r["provider"] for r in rows if r["provider"]})
    return Read(_frame.finish(rows, log), log.faults(), meta)


def _row(op: Any, line: int, log: FaultLog) -> dict[str, Any] | None:
    if not isinstance(op, dict) or "DebugName" not in op:
        log.error("An operation's dictionary has no DebugName: left out.", kind="schema", line=line)
        return None
    selected = op.get("SelectedBackend")
    selected = selected.strip('"') or None if isinstance(selected, str) else None
    times = got if isinstance(got := op.get("EstimatedRunTime"), dict) else {}
    cost = row_cost(times[selected]) if selected and isinstance(times.get(selected), str) else None
    if selected and cost is None:
        log.warning(
            f"No EstimatedRunTime for the selected backend {selected}: cost unknown.",
            kind="missing",
            line=line,
            field="EstimatedRunTime",
        )
    return {
        "node": str(op["DebugName"]),
        "op_type": op.get("OpType") if isinstance(op.get("OpType"), str) else None,
        "provider": selected,
        "device": _frame.device_of(selected),
        "cost": cost,
        "line": line,
    }


def _parse(text: str) -> Any:
    """A value in Foundation's description syntax: {k = v; ...}, (v, ...), "str" or bare."""
    tokens = [(m["punct"], m["q"], m["bare"]) for m in _TOKEN.finditer(text) if m.group().strip()]
    if sum(len(m.group()) for m in _TOKEN.finditer(text)) != len(text.rstrip()) and text.strip():
        raise ValueError("unexpected characters")
    value, pos = _value(tokens, 0, 0)
    if pos != len(tokens):
        raise ValueError("text after the dictionary")
    return value


def _value(
    tokens: list[tuple[str | None, str | None, str | None]], pos: int, depth: int
) -> tuple[Any, int]:
    if depth > MAX_DEPTH:
        raise ValueError("nested too deeply")
    if pos >= len(tokens):
        raise ValueError("ends too early")
    punct, quoted, bare = tokens[pos]
    if quoted is not None:
        return re.sub(r"\\(.)", r"\1", quoted), pos + 1
    if bare is not None:
        return bare, pos + 1
    if punct == "{":
        out: dict[str, Any] = {}
        pos += 1
        while pos < len(tokens) and tokens[pos][0] != "}":
            key, pos = _value(tokens, pos, depth + 1)
            if pos >= len(tokens) or tokens[pos][0] != "=":
                raise ValueError("'=' expected")
            out[str(key)], pos = _value(tokens, pos + 1, depth + 1)
            if pos >= len(tokens) or tokens[pos][0] != ";":
                raise ValueError("';' expected")
            pos += 1
        if pos >= len(tokens):
            raise ValueError("'}' expected")
        return out, pos + 1
    if punct == "(":
        items: list[Any] = []
        pos += 1
        while pos < len(tokens) and tokens[pos][0] != ")":
            item, pos = _value(tokens, pos, depth + 1)
            items.append(item)
            if pos < len(tokens) and tokens[pos][0] == ",":
                pos += 1
        if pos >= len(tokens):
            raise ValueError("')' expected")
        return items, pos + 1
    raise ValueError(f"unexpected {punct!r}")


READER = EvidenceReader(INFO, rank=180, sniff=sniff, read=read, doc=__doc__ or "")
