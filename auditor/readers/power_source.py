"""The power source as the OS reported it at a trial's start
(`power_source/<policy_id>/trial-<n>.<ext>`, docs/run-dir-residency.md), in the raw form
each OS gives it:

- `pmset -g batt` output (macOS): the first line `Now drawing from 'AC Power'` or `'Battery
  Power'` (any other, or none: unknown);
- `windows-system-power-status/1` JSON (Windows `GetSystemPowerStatus`): `ACLineStatus` 1 is
  AC, 0 battery, 255 (or a failed call) unknown;
- `linux-power-supply/1` JSON (`/sys/class/power_supply`): a `Mains` supply with `online`
  "1" is AC; none online with a `Battery` whose `status` is "Discharging" (or any battery
  beside an offline mains) is battery; nothing listed: unknown.

`value` is `ac`, `battery` or None (unknown, with a `meta["why"]`); a file that is none of
these forms is an error fault naming it."""

from __future__ import annotations

import json
from typing import Any

from auditor.readers.base import Fault, Read


def read(data: bytes, *, name: str) -> Read[str]:
    text = data.decode("utf-8", errors="replace")
    if text.startswith("Now drawing from") or name.endswith(".pmset.txt"):
        first = text.splitlines()[0] if text else ""
        value = "ac" if "'AC Power'" in first else "battery" if "'Battery Power'" in first else None
        return Read(
            value,
            (),
            {
                "tool": "pmset -g batt",
                "why": None
                if value
                else f"pmset's first line says neither AC nor battery: {first!r}",
            },
        )
    try:
        doc: Any = json.loads(text)
    except ValueError as exc:
        return Read(None, (Fault(name, f"not a power source reading: {exc}"),), {})
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if fmt == "windows-system-power-status/1":
        line = doc.get("ACLineStatus") if doc.get("call_succeeded", True) else None
        value = {1: "ac", 0: "battery"}.get(line) if isinstance(line, int) else None
        return Read(
            value,
            (),
            {
                "tool": "GetSystemPowerStatus",
                "read_at": doc.get("read_at"),
                "why": None if value else f"ACLineStatus {line!r}",
            },
        )
    if fmt == "linux-power-supply/1" and isinstance(doc.get("supplies"), dict):
        sup = {k: v for k, v in doc["supplies"].items() if isinstance(v, dict)}
        mains = [v for v in sup.values() if v.get("type") == "Mains"]
        batteries = [v for v in sup.values() if v.get("type") == "Battery"]
        value = (
            "ac"
            if any(v.get("online") == "1" for v in mains)
            else "battery"
            if any(v.get("status") == "Discharging" for v in batteries) or (batteries and mains)
            else None
        )
        return Read(
            value,
            (),
            {
                "tool": "/sys/class/power_supply",
                "read_at": doc.get("read_at"),
                "why": None if value else "no mains online and no battery discharging listed",
            },
        )
    return Read(
        None,
        (
            Fault(
                name,
                "not a power source reading (pmset -g batt output, "
                "windows-system-power-status/1 or linux-power-supply/1)",
            ),
        ),
        {},
    )
