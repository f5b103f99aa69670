"""cpu trial 1's counters are first read 0.5 s into the window, its energy summary honestly
saying not measured (so B0604 agrees): 0.5 s of the window unobserved, which only B0601 checks."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

from ._helpers import set_energy_summary

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    def late(recs: list[dict]) -> list[dict]:
        start = next(r["t"] for r in recs if r.get("event") == "window_start")
        cut = br.iso(br.datetime.fromisoformat(start) + br.timedelta(seconds=0.5))
        return [r for r in recs if r["kind"] != "counter" or r["t"] >= cut]

    set_energy_summary(
        "cpu",
        1,
        status="not_measured",
        reason="counters read late",
        energy_j=None,
        average_power_w=None,
        joules_per_inference=None,
    )(root)
    br.edit_jsonl(root, "power/cpu/trial-1.jsonl", late)


MUTATION = mutate
