"""`audit evidence --format text`: an `EvidenceSummary` for a terminal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.evidence import EvidenceSummary
from auditor.output import Format
from auditor.readers.base import Fault


def render(s: EvidenceSummary, *, color: bool = False) -> str:
    out = [f"file      {s.file} ({s.size_bytes:,} bytes)"]
    if s.reader is None:
        out.append("reader    none recognizes this file")
    else:
        out.append(f"reader    {s.reader}: {s.description} [{s.tool}]")
    out.append(f"usable    {'yes' if s.usable else 'NO: ' + (s.reason or '')}")
    if s.power is not None:
        out += _power(s)
    if s.placement is not None:
        out += _placement(s.placement)
    notes = list(s.meta.get("notes") or [])
    for key in ("timezone_assumed", "local_utc_offset"):
        if s.meta.get(key):
            notes.append(f"{key}: {s.meta[key]}")
    out += [f"note      {n}" for n in notes]
    out.append(f"faults    {len(s.faults)}" + ("" if s.faults else " (none)"))
    out += [f"  {_fault(f)}" for f in s.faults]
    return "\n".join(out) + "\n"


def _power(s: EvidenceSummary) -> list[str]:
    p = s.power
    assert p is not None
    out = [
        f"readings  {p.readings:,} in {p.samples:,} samples; devices "
        f"{', '.join('-' if d is None else str(d) for d in p.devices)}"
    ]
    if p.timestamps:
        out.append(f"time      {p.start} to {p.end} ({_num(p.span_s)} s)")
        out.append(
            f"interval  median {_num(p.median_interval_s)} s, largest "
            f"{_num(p.max_interval_s)} s; gaps (> 2x median): {p.gap_count}"
        )
        out += [
            f"  gap at line {g['line']} (device {g['device']}): {_num(g['interval_s'])} s "
            f"before {g['end']}"
            for g in p.gaps
        ]
    else:
        out.append("time      none in the file: it cannot show which window it covers")
    out.append("domains   domain / device / source: readings, mean W [min-max], energy J")
    for d in p.domains:
        dev = "-" if d["device"] is None else d["device"]
        energy = "" if d["energy_j"] is None else f", {_num(d['energy_j'])} J"
        out.append(
            f"  {d['domain']} / {dev} / {d['source']}: {d['readings']}, "
            f"{_num(d['mean_w'])} W [{_num(d['min_w'])}-{_num(d['max_w'])}]{energy}"
        )
    return out


def _placement(sh: Mapping[str, Any]) -> list[str]:
    out = [
        f"nodes     {sh['nodes']:,}; with placement {sh['ops_with_placement']:,}; on the "
        f"accelerator ({', '.join(sh['accelerator'])}) {sh['ops_on_accelerator']:,}",
        f"shares    operations {_pct(sh['operation_share'])}, estimated cost "
        f"{_pct(sh['cost_share'])}, CPU nodes {_pct(sh['cpu_node_share'])}",
        "devices   " + ", ".join(f"{k} {v}" for k, v in sh["by_device"].items()),
    ]
    if sh.get("transfers"):
        out.append(
            f"copies    {sh['transfers']:,} memory copies between devices (ORT's Memcpy "
            "nodes), out of every share: "
            + ", ".join(f"{k} {v}" for k, v in sh["transfers_by_device"].items())
        )
    out += [
        f"  {op or '(no op type)'}: " + ", ".join(f"{k} {v}" for k, v in devs.items())
        for op, devs in sh["by_op_type"].items()
    ]
    return out


def _fault(f: Fault) -> str:
    where = f.file + (f":{f.line}" if f.line else "") + (f" {f.pointer}" if f.pointer else "")
    field = f" [{f.field}]" if f.field else ""
    value = f" ({f.value!r})" if f.value else ""
    return f"{where}: {f.severity} {f.kind}{field}: {f.message}{value}"


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.6g}"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v * 100:.2f}%"


FORMAT = Format("text", "for a person", render)
