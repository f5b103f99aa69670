"""cpu trial 4 claims a p95 latency of 9.9 ms, not the nearest-rank p95 of its answers'
latencies (re-sealed): only B0303 recomputes it."""

from __future__ import annotations

from ._helpers import set_row

TEMPLATE = "synthetic"

MUTATION = set_row("trials.csv", "cpu", 4, p95_latency_ms="9.9")
