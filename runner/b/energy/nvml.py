"""NVIDIA GPUs through NVML (`pynvml`, from nvidia-ml-py: the optional extra `gpu`).

- Energy: `nvmlDeviceGetTotalEnergyConsumption`, a 64-bit millijoule counter since the driver
  was loaded (Volta or newer). It does not wrap: a decrease is a driver reload, a reset
  (`max_range` null in the record). It updates only every few tens of milliseconds, so a short
  window sees few updates: the window analysis counts them.
- Power: `nvmlDeviceGetFieldValues` with POWER_INSTANT and POWER_AVERAGE (milliwatts), each
  value with NVML's own timestamp, used to date and de-duplicate samples. Drivers without
  those fields fall back to `nvmlDeviceGetPowerUsage`, dated by the host clock.

`lib` is the pynvml module, or a fake with the same functions in tests.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import Any

from runner.b.energy.base import Record, iso_utc, now_utc

COUNTER_FIELD = "nvmlDeviceGetTotalEnergyConsumption"
POWER_FIELDS = ("POWER_INSTANT", "POWER_AVERAGE")
# NVML value types of a field value (nvml.h nvmlValueType_t)
_VALUE_ATTR = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal"}


def _load_pynvml() -> Any:
    import pynvml  # optional: nvidia-ml-py

    return pynvml


class NvmlInstrument:
    source = "nvml"

    def __init__(self, devices: list[tuple[int, str | None]], lib: Any | None = None) -> None:
        """`devices`: (CUDA index, UUID as torch reports it) of the GPUs to read. The UUID
        finds the same board in NVML whatever CUDA_VISIBLE_DEVICES renumbered; without it,
        the index is taken as NVML's."""
        self.devices = devices
        self.lib: Any = lib  # the pynvml module (untyped), loaded by open() when None
        self.handles: list[tuple[int, Any]] = []
        self.field_ids: dict[str, int] = {}
        self.counter_ok: dict[int, bool] = {}
        self._last_ts: dict[tuple[int, str], int] = {}
        self._described: dict[str, Any] = {}

    def open(self) -> str | None:
        if self.lib is None:
            try:
                self.lib = _load_pynvml()
            except ImportError:
                return "pynvml is not installed (pip install nvidia-ml-py, the extra `gpu`)"
        lib = self.lib
        try:
            lib.nvmlInit()
        except Exception as exc:  # no driver, no GPU: say which
            return f"NVML did not start ({type(exc).__name__}: {exc})"
        if not self.devices:
            with contextlib.suppress(Exception):
                lib.nvmlShutdown()
            return "NVML is there, but no policy of this run uses a GPU"
        for cuda_index, uuid in self.devices:
            handle = None
            if uuid:
                name = uuid if uuid.startswith(("GPU-", "MIG-")) else f"GPU-{uuid}"
                handle = _safe(lambda n=name: lib.nvmlDeviceGetHandleByUUID(n))
            if handle is None:
                handle = _safe(lambda i=cuda_index: lib.nvmlDeviceGetHandleByIndex(i))
            if handle is None:
                return f"NVML has no handle for GPU {cuda_index} (uuid {uuid})"
            index = _safe(lambda h=handle: int(lib.nvmlDeviceGetIndex(h)))
            self.handles.append((cuda_index if index is None else index, handle))
        for name in POWER_FIELDS:
            fid = getattr(lib, f"NVML_FI_DEV_{name}", None)
            if fid is not None:
                self.field_ids[name] = int(fid)
        devices = []
        for index, handle in self.handles:
            try:
                lib.nvmlDeviceGetTotalEnergyConsumption(handle)
                self.counter_ok[index] = True
                counter = "available"
            except Exception as exc:  # pre-Volta, or not supported on this board
                self.counter_ok[index] = False
                counter = f"not readable ({type(exc).__name__}: {exc})"
            board = _text(_safe(lambda h=handle: lib.nvmlDeviceGetName(h)))
            devices.append(
                {
                    "index": index,
                    "name": board,
                    "energy_counter": counter,
                    "uuid": _text(_safe(lambda h=handle: lib.nvmlDeviceGetUUID(h))),
                    "serial": _text(_safe(lambda h=handle: lib.nvmlDeviceGetSerial(h))),
                }
            )
        self._described = {
            "devices": devices,
            "power_fields": sorted(self.field_ids)
            or ["nvmlDeviceGetPowerUsage (host-dated fallback)"],
        }
        return None

    def boards(self) -> list[Record]:
        """One `device` record per board read: its name, UUID and serial (None where NVML
        gives none), dated by the recorder."""
        return [
            {
                "kind": "device",
                "t": now_utc(),
                "t_source": "host",
                "source": "nvml",
                "device": d["index"],
                "name": d["name"],
                "uuid": d["uuid"],
                "serial": d["serial"],
            }
            for d in self._described.get("devices", [])
        ]

    def counters(self) -> list[Record]:
        out = []
        for index, handle in self.handles:
            if not self.counter_ok.get(index):
                continue
            value = int(self.lib.nvmlDeviceGetTotalEnergyConsumption(handle))
            out.append(
                {
                    "kind": "counter",
                    "t": now_utc(),
                    "t_source": "host",
                    "source": "nvml",
                    "domain": "gpu",
                    "device": index,
                    "field": COUNTER_FIELD,
                    "value": value,
                    "unit": "mJ",
                    "max_range": None,
                }
            )
        return out

    def samples(self) -> list[Record]:
        out: list[Record] = []
        for index, handle in self.handles:
            if self.field_ids:
                out.extend(self._field_samples(index, handle))
            else:
                mw = _safe(lambda h=handle: self.lib.nvmlDeviceGetPowerUsage(h))
                if mw is not None:
                    out.append(
                        {
                            "kind": "sample",
                            "t": now_utc(),
                            "t_source": "host",
                            "source": "nvml",
                            "domain": "gpu",
                            "device": index,
                            "field": "nvmlDeviceGetPowerUsage",
                            "watts": int(mw) / 1000,
                        }
                    )
        return out

    def _field_samples(self, index: int, handle: Any) -> list[Record]:
        names = list(self.field_ids)
        try:
            values = self.lib.nvmlDeviceGetFieldValues(handle, [self.field_ids[n] for n in names])
        except Exception:
            return []  # a failed poll is a gap in the samples, seen by the analysis
        out = []
        for name, fv in zip(names, values, strict=False):
            if getattr(fv, "nvmlReturn", 0) != 0:
                continue  # this field is not supported here (POWER_AVERAGE on Turing)
            ts = int(fv.timestamp)
            if self._last_ts.get((index, name)) == ts:
                continue  # the same reading again: NVML has not updated it
            self._last_ts[(index, name)] = ts
            mw = getattr(fv.value, _VALUE_ATTR.get(int(getattr(fv, "valueType", 1)), "uiVal"))
            out.append(
                {
                    "kind": "sample",
                    "t": iso_utc(datetime.fromtimestamp(ts / 1e6, UTC)),
                    "t_source": "nvml",
                    "source": "nvml",
                    "domain": "gpu",
                    "device": index,
                    "field": name,
                    "watts": max(0.0, float(mw) / 1000),
                }
            )
        return out

    def poll_interval(self, requested: float) -> float:
        return requested  # the energy counter does not wrap

    def describe(self) -> dict[str, Any]:
        return {"source": "nvml", **self._described}

    def close(self) -> None:
        if self.lib is not None and self.handles:
            with contextlib.suppress(Exception):
                self.lib.nvmlShutdown()


def _safe(call: Any) -> Any:
    try:
        return call()
    except Exception:
        return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)
