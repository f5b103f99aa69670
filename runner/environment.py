"""The environment as observed during the run (A4), for `environment.json` and the CSV.

The GPU model and count come from the placement evidence of the passes (the GPUs that held
parameters or inputs), never from what the machine or an offer has (A4.2). The driver and the
other processes on the GPUs come from NVML (`pynvml`, the optional extra `gpu`) when it is
there; otherwise the file says why not.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import socket
from typing import Any

import torch

import runner
from runner.passes import now_iso


def runtime() -> dict[str, str | None]:
    if torch.version.hip:
        return {"name": "rocm", "version": str(torch.version.hip)}
    if torch.version.cuda and torch.cuda.is_available():
        return {"name": "cuda", "version": str(torch.version.cuda)}
    return {"name": "cpu", "version": None}


def nvml_snapshot(gpu_indices: list[int]) -> dict[str, Any]:
    """Driver version and other compute processes on the used GPUs, via NVML if possible."""
    try:
        import pynvml  # optional: nvidia-ml-py
    except ImportError:
        return {"nvml": "unavailable (pynvml not installed: pip install nvidia-ml-py)",
                "driver_version": None, "gpu_processes": None}
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # no driver, no GPU: say which
        return {"nvml": f"unavailable ({type(exc).__name__}: {exc})", "driver_version": None,
                "gpu_processes": None}
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        driver = driver.decode() if isinstance(driver, bytes) else str(driver)
        procs: list[dict[str, Any]] = []
        me = os.getpid()
        for index in gpu_indices:
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                if p.pid != me:
                    used = getattr(p, "usedGpuMemory", None)
                    procs.append({"pid": int(p.pid), "gpu_index": index,
                                  "used_memory_bytes": None if used is None else int(used)})
        return {"nvml": "available", "driver_version": driver, "gpu_processes": procs}
    except Exception as exc:
        return {"nvml": f"unavailable ({type(exc).__name__}: {exc})", "driver_version": None,
                "gpu_processes": None}
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def observe(device: str, gpus_used: list[dict[str, Any]], code_version: str) -> dict[str, Any]:
    """The environment.json object; `gpus_used` is the union over the passes' evidence."""
    indices = sorted({g["index"] for g in gpus_used})
    nvml = nvml_snapshot(indices)
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
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
        "host": {"platform": platform.platform(), "machine": platform.machine(),
                 "cpu_count": os.cpu_count() or 0,
                 "hostname_sha256": hashlib.sha256(socket.gethostname().encode()).hexdigest()},
        "concurrent_load": {"loadavg": load, "gpu_processes": nvml["gpu_processes"],
                            "nvml": nvml["nvml"]},
        "packages": {"gpubench-audit": runner.__version__, "torch": torch.__version__},
    }
