"""Other load on the machine during a trial, as its own power trace shows it (B2: no network
or foreground load): the network rates a sensor log records beside the power readings
(HWiNFO's `Current DL/UP rate` of each adapter, the reader's `meta["network"]`).

Per ok trial whose trace logs network rates: each rate averaged over the readings inside the
trial's window; the busiest one is the trial's network load, against the protocol's ceiling
(`schemas/conventions.json`, `network_kbps_max`). A trace without network columns
says nothing of the network (no figure, never zero)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

import schemas
from auditor.protocols.b.facts.trials import Trial, trials
from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.b.view import RunView

NETWORK_KBPS_MAX: float = schemas.convention("B", "network_kbps_max")
"""The most network traffic (KB/s, averaged over a trial's window, per rate logged) a trial
may see: the protocol's figure, above an idle machine's background traffic."""


@dataclass(frozen=True)
class NetworkLoad:
    """The busiest network rate of a trial's trace over its window."""

    trial: Trial
    trace: str
    source: str
    mean_kbps: float
    max_kbps: float
    readings: int
    first_line: int


@per_view
def network_loads(view: RunView) -> tuple[NetworkLoad, ...]:
    """Each ok trial whose trace logs network rates inside its window (module docstring)."""
    out: list[NetworkLoad] = []
    for t in trials(view):
        ev = view.power.get(t.key)
        net = ev.meta.get("network") if ev is not None else None
        if (
            t.status != "ok"
            or t.start is None
            or t.end is None
            or not isinstance(net, pl.DataFrame)
            or net.is_empty()
        ):
            continue
        lo = pl.lit(t.start).cast(pl.Datetime("ns", "UTC"))
        hi = pl.lit(t.end).cast(pl.Datetime("ns", "UTC"))
        inside = net.filter(
            (pl.col("end") >= lo) & (pl.col("end") <= hi) & pl.col("kbps").is_not_null()
        )
        if inside.is_empty():
            continue
        per = (
            inside.group_by("source")
            .agg(
                pl.col("kbps").mean().alias("mean"),
                pl.col("kbps").max().alias("max"),
                pl.len().alias("n"),
                pl.col("line").min().alias("line"),
            )
            .sort("mean", "source", descending=[True, False])
        )
        src, mean, top, n, line = per.row(0)
        out.append(NetworkLoad(t, ev.path, src, mean, top, n, line))  # type: ignore[union-attr]
    return tuple(out)
