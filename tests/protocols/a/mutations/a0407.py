"""environment.json records that other processes used 1.7 of 2 CPUs on average while the
passes ran (its own `busy` flag says false: the figures decide), re-hashed: only A0407 warns
that the machine was busy."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf

TEMPLATE = "cpu"

BUSY = {
    "method": "test",
    "cpus": 2,
    "seconds": 17.0,
    "samples": 17,
    "interval_s": 1.0,
    "machine_cpus_mean": 1.95,
    "other_cpus_mean": 1.7,
    "other_cpus_max": 2.0,
    "loadavg_1min_max": 8.6,
    "busy_threshold_cpus": 0.5,
    "busy": False,
}


def mutate(root: Path) -> None:
    rf.edit_json(
        root, "environment.json", lambda e: e["concurrent_load"].update(while_measuring=BUSY)
    )


MUTATION = mutate
