"""What both protocols derive from the run's records of the machine while it measured: the
intra-op threads the manifest declares (`threads`) against those observed in the processes
that measured, and how busy the machine was (environment.json `concurrent_load`). Each
protocol's rules and report read these; the protocols say where their observations are.

**Busy** is recomputed from the record's figures with the convention of
`schemas/load-record.schema.json` (`x-convention.busy_other_cpus_fraction`): the machine was
busy when other processes used at least that fraction of its CPUs on average over the
measured region. The record's own `busy` flag is a claim; the figures decide.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import schemas

THREAD_KEYS = {"torch": "torch_intra_op", "onnxruntime": "onnxruntime_intra_op"}
"""Runtime -> the manifest's `threads` key that declares its intra-op threads."""


@cache
def busy_fraction() -> float:
    return float(schemas.load("load_record")["x-convention"]["busy_other_cpus_fraction"])


@dataclass(frozen=True)
class Load:
    """One load record (environment.json `concurrent_load.<when>`), its figures checked."""

    when: str
    """`while_measuring` or `before`."""
    cpus: int
    other_cpus_mean: float | None
    other_cpus_max: float | None
    seconds: float | None
    loadavg_1min_max: float | None
    busy: bool | None
    """Recomputed: other processes used at least `busy_fraction()` of the CPUs on average;
    None when the record could not measure other processes (no /proc/stat)."""

    @property
    def threshold_cpus(self) -> float:
        return busy_fraction() * self.cpus

    def shown(self, environment: str) -> dict[str, Any]:
        """Where a finding about this load points and the figures it shows (A0407, B0206):
        the record in ENVIRONMENT (the protocol's environment.json path)."""
        return {
            "artifact": environment,
            "pointer": f"/concurrent_load/{self.when}",
            "observed": self.other_cpus_mean,
            "expected": f"< {self.threshold_cpus:g} CPUs",
            "evidence": {
                "cpus": self.cpus,
                "other_cpus_max": self.other_cpus_max,
                "loadavg_1min_max": self.loadavg_1min_max,
            },
        }

    def sentence(self) -> str:
        """The record in words (the reports' page 1, the findings)."""
        when = "while measuring" if self.when == "while_measuring" else "before measuring"
        if self.other_cpus_mean is None:
            return (
                f"machine load {when}: other processes not measured (no /proc/stat); "
                f"1-min load average up to {self.loadavg_1min_max}"
            )
        state = "BUSY" if self.busy else "quiet"
        return (
            f"machine {state} {when}: other processes used {self.other_cpus_mean:.2f} of "
            f"{self.cpus} CPUs on average (up to {self.other_cpus_max or 0:.2f})"
            + (f" over {self.seconds:.0f} s" if self.seconds is not None else "")
        )


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def load_of(environment: Mapping[str, Any] | None, when: str = "while_measuring") -> Load | None:
    """The load record WHEN of ENVIRONMENT; None when the run recorded none (a run made
    before the record existed, or by hand)."""
    cl = (environment or {}).get("concurrent_load")
    rec = cl.get(when) if isinstance(cl, Mapping) else None
    if not isinstance(rec, Mapping):
        return None
    cpus = rec.get("cpus")
    if not isinstance(cpus, int) or isinstance(cpus, bool) or cpus < 1:
        return None
    mean = _num(rec.get("other_cpus_mean"))
    return Load(
        when,
        cpus,
        mean,
        _num(rec.get("other_cpus_max")),
        _num(rec.get("seconds")),
        _num(rec.get("loadavg_1min_max")),
        None if mean is None else mean >= busy_fraction() * cpus,
    )


@dataclass(frozen=True)
class ThreadsSeen:
    """One observation of a runtime's intra-op threads, where a record shows it."""

    runtime: str
    artifact: str
    pointer: str
    observed: Any


@dataclass(frozen=True)
class ThreadsDiffer:
    seen: ThreadsSeen
    declared: int


def declared_threads(manifest: Mapping[str, Any] | None) -> dict[str, int]:
    """Runtime -> the intra-op threads the manifest declares (`threads`); empty when it
    declares none (a run made before the key existed, or by hand)."""
    t = (manifest or {}).get("threads")
    if not isinstance(t, Mapping):
        return {}
    return {
        rt: t[key]
        for rt, key in THREAD_KEYS.items()
        if isinstance(t.get(key), int) and not isinstance(t.get(key), bool)
    }


def threads_differ(
    manifest: Mapping[str, Any] | None, seen: Iterable[ThreadsSeen]
) -> list[ThreadsDiffer]:
    """Every observation that is not the declared count of its runtime (an observation of a
    runtime the manifest does not declare is not judged: nothing was promised)."""
    declared = declared_threads(manifest)
    return [
        ThreadsDiffer(s, declared[s.runtime])
        for s in seen
        if s.runtime in declared and s.observed is not None and s.observed != declared[s.runtime]
    ]
