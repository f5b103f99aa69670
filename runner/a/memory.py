"""Memory measurement of one pass (A7), and placement evidence (A4.2).

CUDA: synchronize the device, record the `allocated` and `reserved` baselines and the full
`memory_stats()`, reset the peak statistics, run, synchronize, record the absolute peaks and
the full stats again. `cuda` is a parameter (default `torch.cuda`) so that the path can be
exercised without a GPU by handing it a fake namespace.

CPU: PyTorch's allocator cannot be measured there, so the four cells stay empty; the process's
peak resident set size is recorded under its own name and source (A7.5). It is the peak of the
whole process up to the end of the pass, not of the pass alone: the name says so.
"""

from __future__ import annotations

import resource
import sys
from collections.abc import Iterable
from types import ModuleType
from typing import Any

import torch

from runner.environment import gpu_identity


def _is_cuda(device: str) -> bool:
    return torch.device(device).type == "cuda"


class MemoryProbe:
    """`begin()` before the timed region, `end()` after it; `trace()` is the A7 record."""

    def __init__(self, device: str, cuda: Any | None = None) -> None:
        self.device = device
        self.cuda = cuda if cuda is not None else torch.cuda
        self.on_cuda = _is_cuda(device)
        self._before: dict[str, Any] = {}
        self._after: dict[str, Any] = {}

    def begin(self) -> None:
        if not self.on_cuda:
            return
        c, dev = self.cuda, self.device
        c.synchronize(dev)
        self._before = {
            "baseline_allocated_bytes": int(c.memory_allocated(dev)),
            "baseline_reserved_bytes": int(c.memory_reserved(dev)),
            "memory_stats_before": _numeric(c.memory_stats(dev)),
        }
        c.reset_peak_memory_stats(dev)

    def end(self) -> None:
        if not self.on_cuda:
            self._after = {"rss": peak_rss()}
            return
        c, dev = self.cuda, self.device
        c.synchronize(dev)
        self._after = {
            "peak_allocated_bytes": int(c.max_memory_allocated(dev)),
            "peak_reserved_bytes": int(c.max_memory_reserved(dev)),
            "memory_stats_after": _numeric(c.memory_stats(dev)),
        }

    def cells(self) -> dict[str, int | None]:
        """The four CSV cells: values on CUDA, None ("not recorded") elsewhere."""
        keys = (
            "baseline_allocated_bytes",
            "baseline_reserved_bytes",
            "peak_allocated_bytes",
            "peak_reserved_bytes",
        )
        merged = {**self._before, **self._after}
        return {k: merged.get(k) if self.on_cuda else None for k in keys}

    def trace(self, variant_id: str, phase: str, run_index: int) -> dict[str, Any]:
        base: dict[str, Any] = {
            "variant_id": variant_id,
            "phase": phase,
            "run_index": run_index,
            "device": self.device,
        }
        if self.on_cuda:
            return {
                **base,
                "allocator_measured": True,
                "synchronized": True,
                "peak_stats_reset": True,
                **self.cells(),
                "memory_stats_before": self._before.get("memory_stats_before"),
                "memory_stats_after": self._after.get("memory_stats_after"),
                "other_sources": [],
            }
        rss = self._after.get("rss")
        others = (
            []
            if rss is None
            else [
                {
                    "name": "process_peak_rss_bytes",
                    "value": rss[0],
                    "unit": "bytes",
                    "source": rss[1],
                }
            ]
        )
        return {
            **base,
            "allocator_measured": False,
            "synchronized": False,
            "peak_stats_reset": False,
            **self.cells(),
            "memory_stats_before": None,
            "memory_stats_after": None,
            "other_sources": others,
        }


def _numeric(stats: dict[str, Any]) -> dict[str, int | float]:
    return {
        str(k): v
        for k, v in stats.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


_RSS_SCOPE = (
    "peak resident set size of this process up to the end of this pass, not of the "
    "pass alone; not PyTorch allocator memory"
)


def peak_rss() -> tuple[int, str]:
    """The process's peak RSS in bytes, and the source to record beside it (A7.5).

    On Linux, /proc/self/status VmHWM: it belongs to the address space, which a fresh process
    gets new at exec. ru_maxrss is kept only as the fallback, because on Linux it carries over
    the high-water mark of the forked copy of the parent, so a cold pass in a fresh process
    would report the parent's memory as its own."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024, f"/proc/self/status VmHWM: {_RSS_SCOPE}"
    except (OSError, ValueError, IndexError):
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    value = int(rss if sys.platform == "darwin" else rss * 1024)  # Linux reports KiB
    return value, (
        f"resource.getrusage(RUSAGE_SELF).ru_maxrss: {_RSS_SCOPE}; may include "
        "the parent's memory where the process was forked"
    )


def placement(
    variant_id: str,
    phase: str,
    run_index: int,
    pid: int,
    requested_device: str,
    params: Iterable[torch.Tensor],
    input_devices: dict[str, int],
    cuda: ModuleType | Any | None = None,
) -> dict[str, Any]:
    """Where the parameters and inputs of one pass actually lived, and which GPUs that is."""
    cuda = cuda if cuda is not None else torch.cuda
    param_devices: dict[str, int] = {}
    count = 0
    for p in params:
        key = str(p.device)
        param_devices[key] = param_devices.get(key, 0) + 1
        count += 1
    gpu_indices = sorted(
        {_cuda_index(d, cuda) for d in [*param_devices, *input_devices] if d.startswith("cuda")}
    )
    return {
        "variant_id": variant_id,
        "phase": phase,
        "run_index": run_index,
        "pid": pid,
        "requested_device": requested_device,
        "parameter_devices": param_devices,
        "parameter_count": count,
        "input_devices": dict(input_devices),
        "gpus_used": [gpu_identity(i, cuda) for i in gpu_indices],
        "gpus_visible": int(cuda.device_count()) if cuda.is_available() else 0,
    }


def _cuda_index(device: str, cuda: Any) -> int:
    index = torch.device(device).index
    return int(cuda.current_device()) if index is None else int(index)
