"""environment.json records that other processes used 1.2 of 2 CPUs on average while the
trials ran (its own `busy` flag says false: the figures decide), re-sealed: only B0206 warns
of the foreground load."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"

BUSY = {
    "method": "test",
    "cpus": 2,
    "seconds": 30.0,
    "samples": 30,
    "interval_s": 1.0,
    "machine_cpus_mean": 1.9,
    "other_cpus_mean": 1.2,
    "other_cpus_max": 1.8,
    "loadavg_1min_max": 5.0,
    "busy_threshold_cpus": 0.5,
    "busy": False,
}


def mutate(root: Path) -> None:
    br.edit_json(
        root, "environment.json", lambda e: e["concurrent_load"].update(while_measuring=BUSY)
    )


MUTATION = mutate
