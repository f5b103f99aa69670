"""CPU package energy through RAPL's powercap interface
(`/sys/class/powercap/intel-rapl:<n>/energy_uj`, AMD too on recent kernels).

Each top-level zone is one package (or `psys`, the platform); `energy_uj` is a cumulative
microjoule counter that wraps to 0 at `max_energy_range_uj`, possibly more than once a minute
under load, so it is polled often enough that at most one wrap can fall between two polls:
the poll period is at most `max_energy_range_uj / (max_watts x 1e6) / 4`. The files are
root-only since CVE-2020-8694 and absent in most VMs and containers: then the instrument is
unavailable, with the reason, and nothing is estimated.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from runner.b.energy.base import Record, now_utc

POWERCAP = Path("/sys/class/powercap")
_TOP_ZONE = re.compile(r"^intel-rapl:(\d+)$")


class RaplInstrument:
    source = "rapl"

    def __init__(self, root: Path = POWERCAP, max_watts: float = 1000.0) -> None:
        self.root = root
        self.max_watts = max_watts
        self.zones: list[dict[str, Any]] = []

    def open(self) -> str | None:
        if not self.root.is_dir():
            return (
                f"{self.root} does not exist (no powercap interface on this machine: "
                "typical of VMs and containers)"
            )
        found = sorted(
            (p for p in self.root.iterdir() if _TOP_ZONE.match(p.name)),
            key=lambda p: int(_TOP_ZONE.match(p.name).group(1)),  # type: ignore[union-attr]
        )
        if not found:
            return f"{self.root} has no intel-rapl:<n> zone"
        for zone in found:
            name = _read(zone / "name") or zone.name
            energy = zone / "energy_uj"
            try:
                int(energy.read_text().strip())
                max_range = int((zone / "max_energy_range_uj").read_text().strip())
            except PermissionError:
                return f"{energy} is not readable by this user (root-only since CVE-2020-8694)"
            except (OSError, ValueError) as exc:
                return f"{energy} cannot be read ({type(exc).__name__}: {exc})"
            domain, device = _domain(name, zone.name)
            self.zones.append(
                {
                    "path": energy,
                    "domain": domain,
                    "device": device,
                    "name": name,
                    "max_range": max_range,
                }
            )
        return None

    def counters(self) -> list[Record]:
        out = []
        for z in self.zones:
            try:
                value = int(z["path"].read_text().strip())
            except (OSError, ValueError):
                continue  # a missed read is a gap, seen by the analysis
            out.append(
                {
                    "kind": "counter",
                    "t": now_utc(),
                    "t_source": "host",
                    "source": "rapl",
                    "domain": z["domain"],
                    "device": z["device"],
                    "field": str(z["path"]),
                    "value": value,
                    "unit": "uJ",
                    "max_range": z["max_range"],
                }
            )
        return out

    def samples(self) -> list[Record]:
        return []

    def wrap_safe_seconds(self) -> float | None:
        """The longest time between two polls that cannot hide a second wrap."""
        if not self.zones:
            return None
        return min(z["max_range"] for z in self.zones) / (self.max_watts * 1e6)

    def poll_interval(self, requested: float) -> float:
        safe = self.wrap_safe_seconds()
        return requested if safe is None else min(requested, safe / 4)

    def describe(self) -> dict[str, Any]:
        return {
            "source": "rapl",
            "root": str(self.root),
            "max_watts_assumed": self.max_watts,
            "wrap_safe_seconds": self.wrap_safe_seconds(),
            "zones": [
                {
                    "path": str(z["path"]),
                    "name": z["name"],
                    "domain": z["domain"],
                    "device": z["device"],
                    "max_energy_range_uj": z["max_range"],
                }
                for z in self.zones
            ],
        }

    def close(self) -> None:
        pass


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _domain(name: str, zone: str) -> tuple[str, int]:
    """`package-0` -> (package, 0); `psys` -> (psys, 0); otherwise the zone number."""
    m = re.match(r"^([a-z]+)-(\d+)$", name)
    if m:
        return m.group(1), int(m.group(2))
    index = _TOP_ZONE.match(zone)
    return name, int(index.group(1)) if index else 0
