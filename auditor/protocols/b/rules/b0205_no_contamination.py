"""B0205: the run's own files show no other load and no other power source during the trials.

What it checks: the environment snapshot's `concurrent_load.gpu_processes` (NVML's list of
other compute processes on the GPUs the run uses) is empty; and no ok trial whose row records
AC power has a battery reading in its own power trace showing the battery discharging (a
`battery` domain reading below `DISCHARGE_W`: the machine ran on battery, whatever the row
says), nor one whose row records another power source than the OS reported at its start
(`power_source/<policy_id>/trial-<n>.<ext>`: `pmset -g batt`, GetSystemPowerStatus,
/sys/class/power_supply, auditor/readers/power_source.py); and no ok trial's trace logs
network traffic averaging more than the protocol's `NETWORK_KBPS_MAX` over its window
(HWiNFO's network rates: `facts/load.py`). A 1-minute load average above the CPUs during the
run is a warning (other work shared the machine; it may be background), unless the run
measured other processes' CPU while the trials ran (`concurrent_load.while_measuring`), which
B0206 judges.
Reads: environment.json `/concurrent_load`; trials.csv `power_source`; power/* (battery
readings, HWiNFO's `Charge Rate`, its network rates); power_source/* (the OS's own reading).
Why it matters: B2: "disable network activity and other foreground workloads"; B7 compares
policies on the same power source. Another process on the GPU takes the accelerator's time
and power (both policies' figures are then another workload's too), and a baseline measured
on battery draws differently from one on AC: the comparison is not the one the run claims.
Example: environment.json lists a python process holding 2 GiB on GPU 0; or HWiNFO's Charge
Rate reads -18 W during the CPU baseline's trial 3, whose row says `ac`; or `pmset -g batt`
said "Now drawing from 'Battery Power'" at the start of a trial whose row says `ac`; or
HWiNFO's Current DL rate reads 41,850 KB/s in every window of the baseline.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import cast

import polars as pl

from auditor.model import Finding
from auditor.protocols import machine
from auditor.protocols.b.artifacts import ENVIRONMENT
from auditor.protocols.b.facts.load import NETWORK_KBPS_MAX, network_loads
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.view import RunView
from auditor.rule import rule

DISCHARGE_W = -0.5
"""A battery reading below this (negative: the battery gives power) is the machine on
battery; a charger's trickle and rounding stay above it."""


def _discharge(view: RunView, key: tuple[str, int], start: int, end: int) -> float | None:
    """The lowest battery reading of trial KEY's trace inside its window, when below
    `DISCHARGE_W`."""
    ev = view.power.get(key)
    if ev is None or ev.frame is None or ev.frame.is_empty():
        return None
    lo = pl.lit(start).cast(pl.Datetime("ns", "UTC"))
    hi = pl.lit(end).cast(pl.Datetime("ns", "UTC"))
    low = cast(
        float | None,
        ev.frame.filter(
            (pl.col("domain") == "battery")
            & pl.col("end").is_not_null()
            & (pl.col("end") >= lo)
            & (pl.col("end") <= hi)
        )["watts"].min(),
    )
    return low if low is not None and low < DISCHARGE_W else None


@rule(
    code="B0205",
    title="no other load or power source during the trials",
    protocol_ref="B2",
    severity="error",
    requires=("trials",),
    fix="Measure on an idle machine (no other GPU process, network and foreground work "
    "off) on the power source each trial records; re-run the trials that were not.",
)
def check(view: RunView) -> Iterator[Finding]:
    env = view.environment or {}
    load = env.get("concurrent_load") if isinstance(env.get("concurrent_load"), Mapping) else {}
    procs = load.get("gpu_processes")
    if isinstance(procs, list) and procs:
        yield RULE.finding(
            f"{len(procs)} other process(es) held the GPU when the run started "
            "(NVML): the trials shared the accelerator",
            artifact=ENVIRONMENT,
            pointer="/concurrent_load/gpu_processes",
            observed=procs[:5],
            expected="no other process on the GPU",
        )
    cpus = (env.get("cpu") or {}).get("count") if isinstance(env.get("cpu"), Mapping) else None
    ones = [
        x[0]
        for x in (load.get("loadavg_before"), load.get("loadavg_after"))
        if isinstance(x, list) and x and isinstance(x[0], int | float)
    ]
    # a run that measured other processes' CPU (B0206 judges it) is not judged again by a
    # load average that counts the run's own threads too
    measured = machine.load_of(env) is not None
    if not measured and ones and isinstance(cpus, int) and cpus > 0 and max(ones) > cpus:
        yield RULE.finding(
            f"a 1-minute load average of {max(ones):.2f} on {cpus} CPUs around "
            "the trials: other work shared the machine",
            artifact=ENVIRONMENT,
            pointer="/concurrent_load",
            severity="warning",
            observed=max(ones),
            expected=f"at most {cpus}",
        )
    for n in network_loads(view):
        if n.mean_kbps > NETWORK_KBPS_MAX:
            yield RULE.finding(
                f"{n.trial.name}: its trace logs {n.mean_kbps:,.1f} KB/s of "
                f"network traffic on average over its window ({n.source}, up "
                f"to {n.max_kbps:,.1f} KB/s): the trial shared the machine with "
                "a network load",
                artifact=n.trace,
                line=n.first_line,
                subject=at_trial(n.trial)["subject"],
                observed=round(n.mean_kbps, 3),
                expected=f"at most {NETWORK_KBPS_MAX:g} KB/s",
                evidence={"column": n.source, "readings": n.readings},
            )
    for t in trials(view):
        said = str(t.claims.get("power_source") or "").lower()
        rel, os_said = view.power_source.get(t.key, (None, None))
        if t.status == "ok" and rel is not None and os_said is not None and said != os_said:
            yield RULE.finding(
                f"{t.name} records {said or 'no'} power source, but the OS "
                f"reported {os_said} at its start ({rel})",
                **at_trial(t),
                observed=said or None,
                expected=os_said,
                evidence={"field": "power_source", "os_reading": rel},
            )
        if t.status != "ok" or said != "ac" or t.start is None or t.end is None:
            continue
        low = _discharge(view, t.key, t.start, t.end)
        if low is not None:
            yield RULE.finding(
                f"{t.name} records AC power, but its own trace shows the battery "
                f"discharging ({low:.3g} W) during its window: it ran on "
                "battery",
                **at_trial(t),
                observed=low,
                expected="ac",
                evidence={"field": "power_source", "trace": view.power[t.key].path},
            )


RULE = check
