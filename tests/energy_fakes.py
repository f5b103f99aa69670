"""Fakes of the energy instruments for the protocol B tests: a pynvml stand-in (the real
`NvmlInstrument` code runs against it), a powercap tree on disk (the real `RaplInstrument`
reads it), and a constant-power counter that implements the `Instrument` interface itself.
Time is the host clock, scaled where a test needs whole seconds in a short window."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.b.energy.base import Record, now_utc


@dataclass
class _Value:
    uiVal: int = 0
    dVal: float = 0.0


@dataclass
class FieldValue:
    fieldId: int
    timestamp: int
    value: _Value
    valueType: int = 1
    nvmlReturn: int = 0


class NvmlError(Exception):
    pass


class FakePynvml:
    """pynvml as far as the runner uses it. The board draws `watts`; the energy counter
    (mJ) and the power fields update every `update_s` seconds, each field value carrying the
    update's timestamp. `energy_values`, when given, replaces the counter by a script (one
    value per read, the last repeated): a reset or a frozen counter."""

    NVML_FI_DEV_POWER_AVERAGE = 185
    NVML_FI_DEV_POWER_INSTANT = 186

    def __init__(
        self,
        watts: float = 50.0,
        update_s: float = 0.02,
        energy_values: list[int] | None = None,
        counter_supported: bool = True,
        average_supported: bool = True,
        init_error: str | None = None,
    ) -> None:
        self.watts = watts
        self.update_s = update_s
        self.energy_values = list(energy_values) if energy_values is not None else None
        self.counter_supported = counter_supported
        self.average_supported = average_supported
        self.init_error = init_error
        self.t0 = time.time()
        self.base_mj = 123_456_789
        self.shutdown = False
        self._lock = threading.Lock()

    def _tick(self) -> float:
        now = time.time()
        return self.t0 + ((now - self.t0) // self.update_s) * self.update_s

    def nvmlInit(self) -> None:
        if self.init_error:
            raise NvmlError(self.init_error)

    def nvmlShutdown(self) -> None:
        self.shutdown = True

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> Any:
        return ("handle", uuid)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:
        return ("handle", index)

    def nvmlDeviceGetIndex(self, handle: Any) -> int:
        return 0

    def nvmlDeviceGetName(self, handle: Any) -> str:
        return "Fake GPU"

    def nvmlDeviceGetUUID(self, handle: Any) -> str:
        return "GPU-5f1c0a2e-0000-4000-8000-00000000cafe"

    def nvmlDeviceGetSerial(self, handle: Any) -> bytes:
        return b"1650522003820"

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any) -> int:
        if not self.counter_supported:
            raise NvmlError("Not Supported")
        with self._lock:
            if self.energy_values is not None:
                return (
                    self.energy_values.pop(0)
                    if len(self.energy_values) > 1
                    else self.energy_values[0]
                )
        return self.base_mj + int((self._tick() - self.t0) * self.watts * 1000)

    def nvmlDeviceGetFieldValues(self, handle: Any, ids: list[int]) -> list[FieldValue]:
        ts = int(self._tick() * 1e6)
        out = []
        for fid in ids:
            ok = fid != self.NVML_FI_DEV_POWER_AVERAGE or self.average_supported
            out.append(
                FieldValue(fid, ts, _Value(uiVal=int(self.watts * 1000)), nvmlReturn=0 if ok else 3)
            )
        return out

    def nvmlDeviceGetPowerUsage(self, handle: Any) -> int:
        return int(self.watts * 1000)


def powercap_tree(root: Path, zones: dict[str, tuple[str, int, int]]) -> Path:
    """A fake /sys/class/powercap: zone dir -> (name, energy_uj, max_energy_range_uj)."""
    for zone, (name, energy, max_range) in zones.items():
        d = root / zone
        d.mkdir(parents=True, exist_ok=True)
        (d / "name").write_text(name + "\n")
        (d / "energy_uj").write_text(f"{energy}\n")
        (d / "max_energy_range_uj").write_text(f"{max_range}\n")
    return root


class ConstantPower:
    """An `Instrument` whose RAPL-like package counter grows at `watts` from the moment it
    is opened and wraps at `max_range_uj`: a window of a known energy, wraps included."""

    source = "rapl"

    def __init__(
        self, watts: float = 10.0, max_range_uj: int = 2_000_000, max_watts: float = 20.0
    ) -> None:
        self.watts = watts
        self.max_range = max_range_uj
        self.max_watts = max_watts
        self.t0 = 0.0
        self.reads = 0

    def open(self) -> str | None:
        self.t0 = time.perf_counter()
        return None

    def counters(self) -> list[Record]:
        self.reads += 1
        total = int((time.perf_counter() - self.t0) * self.watts * 1e6)
        return [
            {
                "kind": "counter",
                "t": now_utc(),
                "t_source": "host",
                "source": "rapl",
                "domain": "package",
                "device": 0,
                "field": "fake/intel-rapl:0/energy_uj",
                "value": total % self.max_range,
                "unit": "uJ",
                "max_range": self.max_range,
            }
        ]

    def samples(self) -> list[Record]:
        return []

    def poll_interval(self, requested: float) -> float:
        return min(requested, self.max_range / (self.max_watts * 1e6) / 4)

    def describe(self) -> dict[str, Any]:
        return {"source": "rapl", "fake": "constant power", "watts": self.watts}

    def close(self) -> None:
        pass
