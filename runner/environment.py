"""The environment as observed during the run, for `environment.json`: protocol A's (A4)
and protocol B's (B1), from shared pieces.

The GPU model and count come from the placement evidence of the passes (the GPUs that held
parameters or inputs), never from what the machine or an offer has (A4.2). The driver and the
other processes on the GPUs come from NVML (`pynvml`, the optional extra `gpu`) when it is
there; otherwise the file says why not.

B1 adds what a per-machine spot check must name: the machine model (DMI), the OS build, the
power source (AC or battery) and the power mode, each read from what Linux exposes, or
"not available" with the reason; never guessed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

import runner
from runner.records import now_iso


def runtime() -> dict[str, str | None]:
    if torch.version.hip:
        return {"name": "rocm", "version": str(torch.version.hip)}
    if torch.version.cuda and torch.cuda.is_available():
        return {"name": "cuda", "version": str(torch.version.cuda)}
    return {"name": "cpu", "version": None}


def _nvml_serial(pynvml: Any, handle: Any) -> str | None:
    """The board's serial number (NVML; consumer boards have none: None), so that an
    auditor can tell this GPU's traces from another's (B: evidence of this machine)."""
    try:
        serial = pynvml.nvmlDeviceGetSerial(handle)
    except Exception:  # NVML_ERROR_NOT_SUPPORTED on GeForce boards
        return None
    return serial.decode() if isinstance(serial, bytes) else str(serial)


def nvml_snapshot(gpu_indices: list[int]) -> dict[str, Any]:
    """Driver version and other compute processes on the used GPUs, via NVML if possible."""
    try:
        import pynvml  # optional: nvidia-ml-py
    except ImportError:
        return {
            "nvml": "unavailable (pynvml not installed: pip install nvidia-ml-py)",
            "driver_version": None,
            "gpu_processes": None,
        }
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # no driver, no GPU: say which
        return {
            "nvml": f"unavailable ({type(exc).__name__}: {exc})",
            "driver_version": None,
            "gpu_processes": None,
        }
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        driver = driver.decode() if isinstance(driver, bytes) else str(driver)
        procs: list[dict[str, Any]] = []
        serials: dict[int, str | None] = {}
        me = os.getpid()
        for index in gpu_indices:
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            serials[index] = _nvml_serial(pynvml, handle)
            for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                if p.pid != me:
                    used = getattr(p, "usedGpuMemory", None)
                    procs.append(
                        {
                            "pid": int(p.pid),
                            "gpu_index": index,
                            "used_memory_bytes": None if used is None else int(used),
                        }
                    )
        return {
            "nvml": "available",
            "driver_version": driver,
            "gpu_processes": procs,
            "serials": serials,
        }
    except Exception as exc:
        return {
            "nvml": f"unavailable ({type(exc).__name__}: {exc})",
            "driver_version": None,
            "gpu_processes": None,
        }
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def loadavg() -> list[float] | None:
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def host() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count() or 0,
        "hostname_sha256": hashlib.sha256(socket.gethostname().encode()).hexdigest(),
    }


def gpu_identity(index: int, cuda: Any) -> dict[str, Any]:
    """One GPU as both protocols' records name it (index, name, UUID, memory); `cuda` is
    `torch.cuda` or a fake with the same functions."""
    props = cuda.get_device_properties(index)
    uuid = getattr(props, "uuid", None)
    return {
        "index": index,
        "name": str(props.name),
        "uuid": None if uuid is None else str(uuid),
        "total_memory_bytes": int(getattr(props, "total_memory", 0)) or None,
    }


def observe(device: str, gpus_used: list[dict[str, Any]], code_version: str) -> dict[str, Any]:
    """The environment.json object; `gpus_used` is the union over the passes' evidence."""
    indices = sorted({g["index"] for g in gpus_used})
    nvml = nvml_snapshot(indices)
    load = loadavg()
    models = sorted({g["name"] for g in gpus_used})
    return {
        "observed_at": now_iso(),
        "device": device,
        "gpu_model": ", ".join(models) if models else None,
        "gpu_count": len(indices),
        "gpus_visible": torch.cuda.device_count() if torch.cuda.is_available() else 0,
        "gpus_used": gpus_used,
        "driver_version": nvml["driver_version"],
        "runtime": runtime(),
        "python_version": platform.python_version(),
        "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "code_version": code_version,
        "host": host(),
        "concurrent_load": {
            "loadavg": load,
            "gpu_processes": nvml["gpu_processes"],
            "nvml": nvml["nvml"],
        },
        "packages": {"gpubench-audit": runner.__version__, "torch": torch.__version__},
    }


# --- B1: machine, OS build, power source and power mode --------------------------------------

DMI = Path("/sys/class/dmi/id")
POWER_SUPPLY = Path("/sys/class/power_supply")
PLATFORM_PROFILE = Path("/sys/firmware/acpi/platform_profile")
CPUFREQ = Path("/sys/devices/system/cpu/cpu0/cpufreq")


@dataclass(frozen=True)
class Observed:
    """One B1 fact: its value and where it was read, or None and why it is not available."""

    value: str | None
    detail: str

    def to_json(self) -> dict[str, Any]:
        if self.value is None:
            return {"value": None, "not_available": self.detail}
        return {"value": self.value, "source": self.detail}

    def note(self, what: str) -> str:
        return (
            f"{what} {self.value}"
            if self.value is not None
            else f"{what} not available: {self.detail}"
        )


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return text or None


def machine_model(dmi: Path = DMI) -> Observed:
    """Vendor and product name from the DMI table."""
    product, vendor = _read(dmi / "product_name"), _read(dmi / "sys_vendor")
    if product is None:
        return Observed(
            None,
            f"{dmi / 'product_name'} is absent or unreadable (no DMI "
            "table: typical of VMs and containers)",
        )
    version = _read(dmi / "product_version")
    parts = [
        p
        for p in (vendor, product, version)
        if p
        and p.lower()
        not in ("to be filled by o.e.m.", "default string", "system product name", "none")
    ]
    return Observed(" ".join(parts) or product, f"{dmi}/sys_vendor, product_name, product_version")


def os_build(os_release: Path = Path("/etc/os-release")) -> dict[str, Any]:
    fields: dict[str, str] = {}
    text = _read(os_release)
    for line in (text or "").splitlines():
        key, _, value = line.partition("=")
        if key in ("PRETTY_NAME", "VERSION_ID", "BUILD_ID", "ID"):
            fields[key.lower()] = value.strip().strip('"')
    uname = platform.uname()
    return {
        "platform": platform.platform(),
        "os_release": fields or None,
        "kernel_release": uname.release,
        "kernel_version": uname.version,
        "machine": uname.machine,
    }


def power_source(root: Path = POWER_SUPPLY) -> Observed:
    """`ac` when a mains supply is online, `battery` when supplies exist and none is online
    (a battery discharging); not available when the OS lists no supply."""
    try:
        supplies = sorted(p for p in root.iterdir())
    except OSError:
        return Observed(None, f"{root} is absent")
    mains = [s for s in supplies if _read(s / "type") == "Mains"]
    batteries = [s for s in supplies if _read(s / "type") == "Battery"]
    if not mains and not batteries:
        return Observed(
            None,
            f"{root} lists no mains or battery supply (a desktop, server "
            "or VM that does not expose one)",
        )
    online = [s.name for s in mains if _read(s / "online") == "1"]
    states = {s.name: _read(s / "status") for s in batteries}
    detail = f"{root}: mains online {online or 'none'}; batteries {states or 'none'}"
    if online:
        return Observed("ac", detail)
    if any(v == "Discharging" for v in states.values()) or (batteries and mains):
        return Observed("battery", detail)
    return Observed(None, f"{detail}: neither a mains supply online nor a battery discharging")


def power_mode(profile: Path = PLATFORM_PROFILE, cpufreq: Path = CPUFREQ) -> Observed:
    """The ACPI platform profile, the cpufreq governor and energy-performance preference."""
    found = {
        "platform_profile": _read(profile),
        "governor": _read(cpufreq / "scaling_governor"),
        "energy_performance_preference": _read(cpufreq / "energy_performance_preference"),
    }
    value = "; ".join(f"{k}={v}" for k, v in found.items() if v)
    if not value:
        return Observed(
            None,
            f"none of {profile}, {cpufreq}/scaling_governor, "
            "energy_performance_preference is exposed",
        )
    return Observed(value, f"{profile}, {cpufreq}")


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    for line in (_read(cpuinfo) or "").splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return None


def onnxruntime_info() -> dict[str, Any]:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        return {"version": None, "available_providers": [], "not_available": str(exc)}
    return {"version": ort.__version__, "available_providers": ort.get_available_providers()}


def observe_residency(
    gpus: list[dict[str, Any]], code_version: str, load_before: list[float] | None
) -> dict[str, Any]:
    """Protocol B's environment.json: B1 plus the runtimes and the machine's load."""
    nvml = nvml_snapshot(sorted(g["index"] for g in gpus))
    serials = nvml.get("serials") or {}
    gpus = [
        {**g, "serial": serials.get(g["index"])} if serials.get(g["index"]) else g for g in gpus
    ]
    return {
        "observed_at": now_iso(),
        "machine": machine_model().to_json(),
        "os": os_build(),
        "power_source": power_source().to_json(),
        "power_mode": power_mode().to_json(),
        "cpu": {"model": cpu_model(), "count": os.cpu_count() or 0},
        "gpus": gpus,
        "driver_version": nvml["driver_version"],
        "runtime": runtime(),
        "python_version": platform.python_version(),
        "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "onnxruntime": onnxruntime_info(),
        "code_version": code_version,
        "host": host(),
        "concurrent_load": {
            "loadavg_before": load_before,
            "loadavg_after": loadavg(),
            "gpu_processes": nvml["gpu_processes"],
            "nvml": nvml["nvml"],
        },
        "packages": {"gpubench-audit": runner.__version__, "torch": torch.__version__},
    }
