"""The run is built with torch-cuda's latencies adding up to half of each 1.2 s window (its own
values in every trial, every claim computed from them): the other half of each window is
idle time padded onto it, which only B0606 weighs against the latencies."""

from __future__ import annotations

import b_runs as br

from ._helpers import build

TEMPLATE = None  # the run is built from its own spec


def _half_window(trial: int, n: int) -> list[float]:
    return [round(0.6 * (1 + 1e-6 * ((i * 31 + trial * 17) % 97)), 9) for i in range(n)]


MUTATION = build(br.with_policy(br.synthetic_spec(), "torch-cuda", latency_fn=_half_window))
