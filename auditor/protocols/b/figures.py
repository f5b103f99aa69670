"""Protocol B's own figures of one compute policy, besides those every configuration has
(`auditor.model.ConfigSummary`), each recomputed from the raw latencies, power traces and
placement evidence: what the report shows and the archive keeps as `figures_json`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PolicyFigures:
    """Protocol B's figures of one compute policy, each recomputed from the raw latencies,
    power traces and placement evidence."""

    role: str
    runtime: str
    compute_units: str
    trials_ok: int
    trials: int
    p95_ms: float | None
    latencies: int
    avg_power_w: float | None
    joules_per_inference: float | None
    energy_source: str | None
    energy_window_s: float | None
    """Seconds of inference windows the energy was integrated over."""
    energy_domains: str | None
    energy_missing: str | None
    """Why the policy has no energy figure (None when it has one)."""
    operation_share: float | None
    cost_share: float | None
    operation_share_floor: float | None
    accuracy: float | None
    agreement: float | None
    domain_power_w: tuple[tuple[str, float], ...] = ()
    """Each summed domain's own average power (`domain[:device]`, W): the average power is
    their sum, each reported."""

    def to_json(self, verdict: str) -> dict[str, Any]:
        """The figures with the policy's VERDICT (the archive tells a baseline by it)."""
        out = {"verdict": verdict, **dataclasses.asdict(self)}
        out["domain_power_w"] = dict(self.domain_power_w)
        return out
