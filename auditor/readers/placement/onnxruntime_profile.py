"""ONNX Runtime profiling JSON (`SessionOptions.enable_profiling`), old and new versions.

ORT writes a JSON array of Chrome-trace events, one event a line:
`Session` events (model_loading_uri, session_initialization, SequentialExecutor::Execute,
model_run) and `Node` events. Per node and run, `<node>_kernel_time` carries `args.provider`
(the execution provider) and `args.op_name`; older versions also write `<node>_fence_before`
and `<node>_fence_after` (counted, not read); very old ones write no `provider`: such a node
is `unknown`, never CPU. Node names may hold dots, spaces and quotes (`input.1`): the name is
everything before the last `_kernel_time`.

One row per node: `node` (the name), `op_type` (op_name), `provider` as written, `device`
normalized (`placement._frame`), `cost` = the node's total kernel `dur` in microseconds over
all profiled runs (a `dur` that is no finite non-negative number gives no cost), `line` =
its first kernel event. Nodes are keyed by `args.node_index` where
given (names are not unique), else by name. `meta` holds the event counts, the number of
runs (`model_run` events), how many kernel events the busiest node had, and the time origin:
`ts` counts microseconds from the profiling start (`get_profiling_start_time_ns()`), which
the file itself does not hold, so a profile cannot be placed on a power trace from the file
alone.

Copies between devices that ORT inserts at provider boundaries (op `MemcpyFromHost`,
`MemcpyToHost`, nodes `Memcpy`, `Memcpy_1`...) are kept as rows with their op type, and
`placement_shares` counts them apart from the compute operations (`transfers`); their number
is `meta["transfer_nodes"]`.

A profile is read line by line when it has ORT's layout (so a cut file keeps every whole
event before the cut, and each event has its line), else as one JSON document (a
`{"traceEvents": [...]}` object, or re-indented JSON; lines are then unknown). A file
without a closing `]`, or without a `model_run` event, is a `truncated` warning.
"""

from __future__ import annotations

import json
import math
from typing import Any

import polars as pl

from auditor.readers._common import (
    EvidenceReader,
    FaultLog,
    ReaderInfo,
    decode,
    split_lines,
    too_large,
)
from auditor.readers.base import Read
from auditor.readers.placement import _frame

INFO = ReaderInfo(
    name="onnxruntime-profile",
    family="placement",
    tool="ONNX Runtime",
    extensions=(".json",),
    description="ONNX Runtime profiling JSON (enable_profiling), Node events per provider",
)

#: Profiles are tens of MB; beyond this one is refused.
MAX_PROFILE_BYTES = 512 * 1024 * 1024
_KERNEL = "_kernel_time"


def sniff(head: bytes) -> bool:
    text = head.lstrip()[:4096]
    return (
        (text.startswith(b"[") or text.startswith(b'{"traceEvents"'))
        and b'"cat"' in text
        and (b'"Session"' in text or b'"Node"' in text)
    )


def read(data: bytes, *, name: str, **_: Any) -> Read[pl.DataFrame]:
    log = FaultLog(name)
    meta: dict[str, Any] = {
        "tool": "onnxruntime",
        "format": "profile-json",
        "ts_origin": "profiling start (get_profiling_start_time_ns; not in the file)",
    }
    if too_large(data, MAX_PROFILE_BYTES, log, "The ORT profile"):
        return Read(None, log.faults(), meta)
    decoded = decode(data, log, encodings=("utf-8",), what="The ORT profile")
    if decoded is None:
        return Read(None, log.faults(), meta)
    events = _events(decoded[0], log, meta)
    if events is None:
        return Read(None, log.faults(), meta)
    rows = _nodes(events, log, meta)
    return Read(_frame.finish(rows, log, "node"), log.faults(), meta)


def _events(
    text: str, log: FaultLog, meta: dict[str, Any]
) -> list[tuple[dict[str, Any], int | None]] | None:
    lines = split_lines(text)
    body = [(i, ln.strip()) for i, ln in enumerate(lines, start=1) if ln.strip()]
    if body and body[0][1] == "[" and all(s.startswith("{") or s == "]" for _, s in body[1:]):
        meta["layout"] = "one event a line"
        events: list[tuple[dict[str, Any], int | None]] = []
        for i, s in body[1:]:
            if s == "]":
                continue
            try:
                event = json.loads(s.removesuffix(","))
            except ValueError as exc:
                why = getattr(exc, "msg", exc)
                log.error(
                    f"Event is not whole JSON ({why}): left out.", kind="syntax", line=i, value=s
                )
                continue
            except RecursionError:  # nested deeper than the parser's stack: no ORT event is
                log.error(
                    "Event is nested too deeply to be an ORT event: left out.",
                    kind="syntax",
                    line=i,
                )
                continue
            if isinstance(event, dict):
                events.append((event, i))
        if body[-1][1] != "]":
            log.warning(
                "The profile does not end with ']': it was cut short.",
                kind="truncated",
                line=body[-1][0],
            )
        return events
    meta["layout"] = "one document"
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        log.error(
            f"The profile is not JSON ({getattr(exc, 'msg', type(exc).__name__)}).",
            kind="syntax",
            line=getattr(exc, "lineno", None),
        )
        return None
    if isinstance(doc, dict):
        doc = doc.get("traceEvents")
    if not isinstance(doc, list):
        log.error(
            'The profile is neither an event array nor a {"traceEvents": [...]} object.',
            kind="schema",
            pointer="",
        )
        return None
    return [(e, None) for e in doc if isinstance(e, dict)]


def _nodes(
    events: list[tuple[dict[str, Any], int | None]], log: FaultLog, meta: dict[str, Any]
) -> list[dict[str, Any]]:
    nodes: dict[str, dict[str, Any]] = {}
    counts = {
        "session_events": 0,
        "node_events": 0,
        "kernel_events": 0,
        "fence_events": 0,
        "model_runs": 0,
    }
    last_ts: float = 0
    for event, line in events:
        cat, name = event.get("cat"), event.get("name")
        if not isinstance(name, str):
            continue
        dur, ts = event.get("dur"), event.get("ts")
        if isinstance(ts, int | float) and isinstance(dur, int | float):
            last_ts = max(last_ts, ts + dur)
        if cat == "Session":
            counts["session_events"] += 1
            counts["model_runs"] += name == "model_run"
            continue
        if cat != "Node":
            continue
        counts["node_events"] += 1
        if name.endswith(("_fence_before", "_fence_after")):
            counts["fence_events"] += 1
            continue
        if not name.endswith(_KERNEL):
            continue
        counts["kernel_events"] += 1
        args = got if isinstance(got := event.get("args"), dict) else {}
        node = name[: -len(_KERNEL)]
        key = str(args.get("node_index", node))
        provider = args.get("provider") if isinstance(args.get("provider"), str) else None
        cost = _duration(dur)
        if cost is None and dur is not None:
            log.warning(
                f"Node {node!r}: its kernel time is no finite non-negative duration: "
                "no cost for this run.",
                kind="type",
                line=line,
                value=dur,
            )
        if key not in nodes:
            nodes[key] = {
                "node": node,
                "op_type": args.get("op_name") if isinstance(args.get("op_name"), str) else None,
                "provider": provider,
                "device": _frame.device_of(provider),
                "cost": cost,
                "line": line,
                "runs": 1,
            }
            continue
        seen = nodes[key]
        seen["runs"] += 1
        if cost is not None:
            seen["cost"] = (seen["cost"] or 0.0) + cost
        if provider != seen["provider"]:
            log.warning(
                f"Node {node!r} ran on {provider} here but on {seen['provider']} "
                "before: the first is kept.",
                kind="duplicate",
                line=line,
            )
    meta.update(counts)
    meta["transfer_nodes"] = sum(n["op_type"] in _frame.TRANSFER_OPS for n in nodes.values())
    meta["fence_events_present"] = counts["fence_events"] > 0
    meta["last_event_end_us"] = last_ts
    meta["kernel_events_per_node_max"] = max((n["runs"] for n in nodes.values()), default=0)
    meta["providers"] = dict(
        sorted(
            {
                p: sum(n["provider"] == p for n in nodes.values())
                for p in {n["provider"] or "(none)" for n in nodes.values()}
            }.items()
        )
    )
    if nodes and not counts["model_runs"]:
        log.warning(
            "No model_run event: the profile ends before its run closed (cut short?).",
            kind="truncated",
        )
    return [{k: v for k, v in n.items() if k != "runs"} for n in nodes.values()]


def _duration(dur: Any) -> float | None:
    """A kernel's `dur` (us) as a float; None when it is no finite non-negative number (a
    400-digit figure is no duration)."""
    if isinstance(dur, bool) or not isinstance(dur, int | float):
        return None
    try:
        value = float(dur)
    except OverflowError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


READER = EvidenceReader(INFO, rank=40, sniff=sniff, read=read, doc=__doc__ or "")
