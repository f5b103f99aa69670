"""`runner memory-probe`: the seed's exercise of learning to record memory (A7) on a small
synthetic MLP, apart from any classification chain and timing nothing.

On CUDA: synchronize, record the `allocated` and `reserved` baselines, reset the peak
statistics, run a forward and backward pass, synchronize, record the absolute peaks; then
check the invariants allocated <= reserved and baseline <= peak (A7.3). Never adds allocated
to reserved, and does not call the difference of the two peaks a cache size (A7.4).
On CPU: says that PyTorch's allocator memory cannot be measured there, and shows the process
peak RSS under its own name instead (A7.5).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import torch
from torch import nn

from runner.a.memory import MemoryProbe
from runner.model import resolve_device


def synthetic_step(device: str, width: int = 1024, batch: int = 256, seed: int = 0) -> None:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
    model = model.to(device)
    x = torch.randn(batch, width, device=device)
    loss = model(x).square().mean()
    loss.backward()


def probe(device: str = "auto", cuda: Any | None = None) -> Iterator[str]:
    dev = resolve_device(device)
    mem = MemoryProbe(dev, cuda=cuda)
    if not mem.on_cuda:
        mem.begin()
        synthetic_step(dev)
        mem.end()
        rss = mem.trace("probe", "warm", 1)["other_sources"][0]
        yield (
            f"device {dev}: PyTorch's allocator memory cannot be measured on CPU; the four "
            "memory cells (baseline/peak allocated/reserved) stay empty, not zero."
        )
        yield f"{rss['name']}: {rss['value']} bytes (source: {rss['source']})"
        return
    mem.begin()
    synthetic_step(dev)
    mem.end()
    c = cast(dict[str, int], mem.cells())  # on CUDA every cell is measured
    yield f"device {dev}: synthetic MLP forward+backward (1024-4096-1024, batch 256)"
    for key in (
        "baseline_allocated_bytes",
        "baseline_reserved_bytes",
        "peak_allocated_bytes",
        "peak_reserved_bytes",
    ):
        yield f"{key}: {c[key]}"
    checks = {
        "baseline allocated <= baseline reserved": c["baseline_allocated_bytes"]
        <= c["baseline_reserved_bytes"],
        "peak allocated <= peak reserved": c["peak_allocated_bytes"] <= c["peak_reserved_bytes"],
        "baseline allocated <= peak allocated": c["baseline_allocated_bytes"]
        <= c["peak_allocated_bytes"],
        "baseline reserved <= peak reserved": c["baseline_reserved_bytes"]
        <= c["peak_reserved_bytes"],
    }
    for name, ok in checks.items():
        yield f"{'ok  ' if ok else 'FAIL'} {name}"
    yield (
        "note: allocated is included in reserved (never add them); the two peaks may come "
        "at different instants, so their difference is not the cache at any instant."
    )
