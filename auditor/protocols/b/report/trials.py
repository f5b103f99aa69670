"""The trials of protocol B's report: the power trace of every ok trial over time with its
inference window (the figure), and every trial with the B6 summary of its trace over its
window."""

from __future__ import annotations

from typing import Any

from auditor.present import NOT_RECORDED
from auditor.protocols.b.facts.crosscheck import Series
from auditor.protocols.b.facts.trials import Trial, trials
from auditor.protocols.b.report.notes import EnergyNotes
from auditor.protocols.b.report.text import fmt
from auditor.protocols.b.view import RunView

MAX_POINTS = 2000
"""Points of one trial's power curve in the figure (a long trace is thinned, evenly)."""


def _curve(t: Trial) -> list[list[float]]:
    """The summed power of the series the energy is computed from, as steps over time
    (seconds from the window's start), thinned evenly to at most `MAX_POINTS`."""
    curve = t.energy.curve if t.energy is not None else []
    step = max(1, -(-len(curve) // MAX_POINTS))
    return [[round(a, 6), round(w, 6)] for a, w in curve[::step]]


def power_section(view: RunView) -> list[dict[str, Any]]:
    """Per policy, every ok trial's power over time and its window, for the figure."""
    out: dict[str, dict[str, Any]] = {}
    for t in trials(view):
        if t.status != "ok" or t.wall_s is None:
            continue
        entry = out.setdefault(t.policy_id, {"policy_id": t.policy_id, "trials": []})
        e = t.energy
        entry["trials"].append(
            {
                "trial_index": t.trial_index,
                "wall_s": t.wall_s,
                "status": e.status if e else "no_trace",
                "points": _curve(t),
            }
        )
    return list(out.values())


def trials_section(view: RunView, notes: EnergyNotes) -> list[dict[str, Any]]:
    """Every trial, and the B6 summary of its trace over its window (why its energy was not
    measured: a reference to NOTES)."""
    rows = []
    for t in trials(view):
        e = t.energy
        rows.append(
            {
                "policy_id": t.policy_id,
                "trial_index": t.trial_index,
                "row": t.row,
                "status": t.status,
                "position": t.claims.get("order_position"),
                "window": (
                    f"{t.texts.get('started_at') or NOT_RECORDED} ({t.window_from})"
                    if t.window_from
                    else NOT_RECORDED
                ),
                "wall": fmt(t.wall_s, "s"),
                "p95": fmt(t.p95_ms, "ms"),
                "answers": t.lines,
                "energy": fmt(e.energy_j, "J") if e and e.measured else "—",
                "power": fmt(e.average_power_w, "W") if e and e.measured else "—",
                "trace": (e.trace if e else None) or "—",
                "status_energy": (
                    "measured"
                    if e and e.measured
                    else f"{e.status} {notes.refer(str(e.reason))}"
                    if e and e.reason
                    else e.status
                    if e
                    else "—"
                ),
                "series": [
                    {
                        "name": _series_name(s),
                        "readings": s.readings,
                        "updates": s.updates if s.kind == "counter" else None,
                        "max_interval_s": s.max_interval_s,
                        "covered": s.covered,
                        "energy_j": s.energy_j,
                    }
                    for s in (e.series if e else [])
                ],
            }
        )
    return rows


def _series_name(s: Series) -> str:
    """`gpu 0 (nvml)`: the domain, the device and the instrument (our runner's) or the
    tool's own column name."""
    src = s.source.split(":", 1)[0] if ":" in s.source and "/" in s.source else s.source
    return f"{s.domain}{'' if s.device is None else f' {s.device}'} ({src})"
