"""Protocol B's sections of the report's view model: they format the protocol's facts
(`facts/`) and its run summary (`summary.py`), and compute nothing of their own.

Page 1 (`summary`) gives the verdict of every compute policy first, with its median wall
time, p95 latency, average power, joules per inference and operation share against its floor,
then what to decide. The sections after the findings: the policy comparison table (every
figure with its source: energy instrument and window, shares against the floor, gates), the
power trace of every trial over time with its inference window marked, placement shares
per policy, the B6 summary of every trace over every window, and what was measured.

A policy's verdict comes from the audit: `baseline` for the declared CPU-only baseline (what
the others are compared with, never accepted or rejected itself), `rejected` when an error
finding names it, `incomplete` when a finding says evidence of it is missing, `accepted` only
when nothing is wrong with it and the run as a whole is accepted; a policy with nothing
against it in a run that is not accepted takes the run's verdict, with that reason. Every
figure is the auditor's recomputation (`facts/`), never the run's claim. The tree holds
only JSON values, so it can be compared with a golden file and rendered by any template.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.model import AuditResult, ConfigSummary, Finding, RunSummary
from auditor.present import NOT_RECORDED, json_safe, lookup
from auditor.protocols import machine
from auditor.protocols.b.artifacts import POLICIES, TRIALS
from auditor.protocols.b.facts.comparisons import comparisons
from auditor.protocols.b.facts.crosscheck import Series
from auditor.protocols.b.facts.declared import minimums, policies, repetitions
from auditor.protocols.b.facts.placement import placements
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.facts.sequence import sequence
from auditor.protocols.b.facts.trials import Trial, trials
from auditor.protocols.b.figures import PolicyFigures
from auditor.protocols.b.summary import PolicyVerdict, policy_verdicts, summarize
from auditor.protocols.b.view import RunView
from auditor.protocols.base import ReportPart

TEMPLATE = "protocol_b.html.j2"
"""The sections of protocol B in the report page (included by report.html.j2)."""

MAX_POINTS = 2000
"""Points of one trial's power curve in the figure (a long trace is thinned, evenly)."""


# -- formatting -------------------------------------------------------------------------------


def _fmt(value: float | None, unit: str, digits: int = 4) -> str:
    if value is None:
        return NOT_RECORDED
    return f"{value:.{digits}g} {unit}".strip()


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.2f} %"


def _figures(c: ConfigSummary) -> PolicyFigures:
    assert isinstance(c.figures, PolicyFigures)
    return c.figures


TONE = {"accepted": "ok", "baseline": "muted", "rejected": "bad", "incomplete": "muted"}


class EnergyNotes:
    """Why energy was not measured, each distinct reason said once and numbered: a run on a
    machine without a power source repeats one long reason for every trial and policy, and
    the tables refer to its number instead (`notes` is the list the page prints)."""

    def __init__(self) -> None:
        self.notes: list[dict[str, Any]] = []
        self._number: dict[str, int] = {}

    SHORT = 80
    """A reason this short is said where it applies; a longer one becomes a note."""

    def refer(self, reason: str) -> str:
        """`(energy note N)` for REASON, numbering it on first use."""
        n = self._number.get(reason)
        if n is None:
            n = self._number[reason] = len(self.notes) + 1
            self.notes.append({"n": n, "text": reason})
        return f"(energy note {n})"

    def abbreviate(self, text: str) -> str:
        """TEXT with each noted reason it quotes replaced by its number (a policy's reason
        quotes its first trial's), the rest a note of its own when still long."""
        for note in sorted(self.notes, key=lambda n: -len(n["text"])):
            text = text.replace(note["text"], f"energy note {note['n']}")
        return text if len(text) <= self.SHORT else self.refer(text)

    def abbreviate_all(self, text: str | None) -> str | None:
        """TEXT with each noted reason it quotes replaced by its number, nothing added."""
        for note in sorted(self.notes, key=lambda n: -len(n["text"])):
            text = text.replace(note["text"], f"energy note {note['n']}") if text else text
        return text


def summary_section(
    view: RunView, result: AuditResult, summary: RunSummary, notes: EnergyNotes | None = None
) -> dict[str, Any]:
    """Page 1: every policy's verdict and figures, then what to decide (why energy is
    missing: a reference to NOTES, where the reason is said)."""
    rows = []
    for c in summary.configurations:
        x = _figures(c)
        # every policy's share from its placement evidence: an accelerator's against its
        # floor, a CPU-only policy's on the CPU (what its policies.csv row records, 1.000)
        cpu = placements(view).get(c.config_id) if x.role != "accelerator" else None
        share = (
            f"{_pct(x.operation_share)} (floor {_pct(x.operation_share_floor)})"
            if x.role == "accelerator"
            else f"{_pct(cpu.cpu_node_share)} on the CPU"
            if cpu is not None and cpu.cpu_node_share is not None
            else "—"
        )
        verdict = c.verdict + (
            f": {c.reason}"
            if c.reason and c.verdict != "accepted" and c.verdict != "baseline"
            else ""
        )
        rows.append(
            {
                "tone": TONE[c.verdict],
                "values": {
                    "verdict": c.verdict,
                    "median_s": c.median_s,
                    "p95_ms": x.p95_ms,
                    "avg_power_w": x.avg_power_w,
                    "joules_per_inference": x.joules_per_inference,
                    "operation_share": x.operation_share,
                },
                "cells": {
                    "policy": f"{c.config_id} ({x.compute_units})",
                    "verdict": verdict,
                    "median": _fmt(c.median_s, "s"),
                    "p95": _fmt(x.p95_ms, "ms"),
                    "power": (
                        _fmt(x.avg_power_w, "W") if x.avg_power_w is not None else "not measured"
                    ),
                    "jpi": (
                        _fmt(x.joules_per_inference, "J")
                        if x.joules_per_inference is not None
                        else "not measured"
                    ),
                    "share": share,
                },
            }
        )
    accepted = [c for c in summary.configurations if c.verdict == "accepted"]
    accel = [c for c in summary.configurations if _figures(c).role == "accelerator"]
    decision = []
    if accepted:
        best = min(accepted, key=lambda c: (_figures(c).joules_per_inference or 0, c.config_id))
        bx = _figures(best)
        decision.append(
            f"Accepted: {', '.join(c.config_id for c in accepted)}: each ran on its "
            "accelerator at or above its floor, passed the gates, and drew less average power "
            "and fewer joules per inference than the CPU-only baseline on the same power "
            f"source. Lowest energy per inference: {best.config_id}, "
            f"{_fmt(bx.joules_per_inference, 'J')} ({bx.energy_source})."
        )
    elif accel:
        decision.append(
            "No accelerator policy is accepted: keep the CPU-only policy, and "
            "read each policy's verdict above for what to fix (B7: an accelerator "
            "is accepted only when it draws less power and energy than the CPU)."
        )
    else:
        decision.append(
            "The run declares no accelerator policy: it compares CPU runtimes "
            "only, and no accelerator can be accepted from it."
        )
    cautions = []
    load = machine.load_of(view.environment)
    if load is not None and load.busy:
        decision.insert(
            0,
            f"Measured on a BUSY machine: {load.sentence().split(': ', 1)[1]} "
            "while the trials ran (B2 asks for no foreground load). Latencies and "
            "power include other work: measure again on an idle machine.",
        )
    missing = sorted(
        {
            _figures(c).energy_missing or ""
            for c in summary.configurations
            if _figures(c).energy_missing and c.median_s is not None
        }
    )
    if missing:
        why = f"({notes.abbreviate(missing[0])})" if notes is not None else f"({missing[0]})"
        cautions.append(
            {
                "kind": "energy",
                "text": "Energy is not measured for every policy "
                f"with latency {why}. Latency without energy decides nothing "
                "here (B10).",
            }
        )
    rejected_energy = [f for f in result.findings if f.code == "B0803"]
    if rejected_energy:
        cautions.append(
            {
                "kind": "energy",
                "text": "Energy was measured on a candidate "
                "rejected at a gate: its figures answer no question (B8).",
            }
        )
    n = len(summary.configurations)
    return {
        "headline": (
            f"{len(accepted)} of {len(accel)} accelerator policy(ies) accepted"
            if accel
            else f"{n} CPU-only policy(ies), no accelerator declared"
        ),
        "columns": [
            {"key": "policy", "label": "Policy"},
            {"key": "verdict", "label": "Verdict (from the audit)"},
            {"key": "median", "label": "Median wall", "align": "r"},
            {"key": "p95", "label": "p95 latency", "align": "r"},
            {"key": "power", "label": "Average power", "align": "r"},
            {"key": "jpi", "label": "Joules per inference", "align": "r"},
            {"key": "share", "label": "Operation share", "align": "r"},
        ],
        "rows": rows,
        "decision": decision,
        "cautions": cautions,
        "notes": [
            "Every figure is recomputed from the raw latencies, power traces and "
            "placement evidence: p95 by nearest rank over every latency of the ok "
            "trials; power and energy over each trial's inference window only, pooled "
            "over the ok trials; the baseline is what the others are compared with."
        ]
        + ([f"{load.sentence()[0].upper()}{load.sentence()[1:]}."] if load is not None else []),
    }


# -- the sections after the findings -----------------------------------------------------------


def comparison_section(
    view: RunView, verdicts: dict[str, PolicyVerdict], notes: EnergyNotes
) -> list[dict[str, Any]]:
    """Every policy with every figure and where it comes from (why its energy was not
    measured: a reference to NOTES)."""
    comps = comparisons(view)
    places = placements(view)
    gates = view.m.get("gates") or {}
    out = []
    for pid, f in policy_facts(view).items():
        p = places.get(pid)
        c = comps.get(pid)
        out.append(
            {
                "policy_id": pid,
                "role": f.policy.role,
                "runtime": f.policy.runtime,
                "compute_units": f.policy.compute_units,
                "precision": f.policy.precision,
                "verdict": verdicts[pid].verdict,
                "why": notes.abbreviate_all(verdicts[pid].detail or verdicts[pid].reason),
                "trials": f"{len(f.ok)} ok of {len(f.trials)}",
                "median_wall": _fmt(f.median_wall_s, "s"),
                "p95": _fmt(f.p95_ms, "ms")
                + (f" (n = {f.n_latencies:,})" if f.n_latencies else ""),
                "power": _fmt(f.average_power_w, "W"),
                "jpi": _fmt(f.joules_per_inference, "J"),
                "energy": (
                    f"{f.energy_source} over {_domains(f.domain_power_w)}; "
                    f"{f.wall_s:.3f} s of windows, {f.inferences:,} inferences"
                    if f.energy_missing is None
                    and f.wall_s is not None
                    and f.inferences is not None
                    else f"not measured ({notes.abbreviate(str(f.energy_missing))})"
                ),
                "share": (
                    "—"
                    if f.policy.role != "accelerator"
                    else f"{_pct(p.operation_share) if p else '—'} of operations"
                    + (f", {_pct(p.cost_share)} of cost" if p and p.cost_share is not None else "")
                    + f" (floor {_pct(f.policy.floor)})"
                ),
                "gates": (
                    f"accuracy {_pct(f.accuracy)} (floor {_pct(gates.get('accuracy_floor'))})"
                    f", agreement {_pct(f.agreement)} "
                    f"(floor {_pct(gates.get('agreement_floor'))})"
                    if f.accuracy is not None
                    else "no answer to judge"
                ),
                "versus_baseline": notes.abbreviate_all(c.reason) if c is not None else "—",
            }
        )
    return out


def _domains(power: tuple[tuple[str, float], ...]) -> str:
    """`package:0 14 W + gpu:0 44 W`: each summed domain with its own average power."""
    return " + ".join(f"{name} {_fmt(w, 'W', 3)}" for name, w in power) or NOT_RECORDED


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
                "wall": _fmt(t.wall_s, "s"),
                "p95": _fmt(t.p95_ms, "ms"),
                "answers": t.lines,
                "energy": _fmt(e.energy_j, "J") if e and e.measured else "—",
                "power": _fmt(e.average_power_w, "W") if e and e.measured else "—",
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


def placement_section(view: RunView) -> list[dict[str, Any]]:
    """Per policy with placement evidence: the file, its tool, shares and compute operators."""
    out = []
    pols = policies(view)
    for pid, p in placements(view).items():
        pol = pols.get(pid)
        out.append(
            {
                "policy_id": pid,
                "role": pol.role if pol else None,
                "accelerator": (
                    "on " + "/".join(sorted(pol.accelerator))
                    if pol and pol.accelerator
                    else "CPU-only"
                ),
                "files": list(p.files),
                "used": p.used,
                "tool": p.tool or NOT_RECORDED,
                "nodes": p.nodes,
                "placed": p.placed,
                "by_device": dict(sorted(p.by_device.items())),
                "operation_share": p.operation_share,
                "cost_share": p.cost_share,
                "cpu_node_share": p.cpu_node_share,
                "floor": pol.floor if pol else None,
                "compute_ops": [
                    {"op_type": op, "devices": ", ".join(f"{d} {n}" for d, n in sorted(by.items()))}
                    for op, by in sorted(p.compute_ops.items())
                ],
                "fallback": p.fallback,
                "problem": p.problem,
                "assigned": [
                    f"{a.get('execution_provider')} ({a.get('device_type')})" for a in p.assigned
                ],
            }
        )
    return out


def measured_section(view: RunView) -> dict[str, Any]:
    m, env = view.m, view.environment or {}
    seq = sequence(view)
    mins = (m.get("energy") or {}).get("minimums") or {}

    def fact(key: str) -> str:
        v = got if isinstance(got := env.get(key), Mapping) else {}
        return str(v.get("value") or f"not available: {v.get('not_available') or '—'}")

    os_ = env.get("os") or {}
    os_text = (
        lookup(os_, "os_release", "PRETTY_NAME")
        or os_.get("build")
        or os_.get("kernel_release")
        or NOT_RECORDED
    )
    return {
        "experiment_id": m.get("experiment_id"),
        "status": m.get("status"),
        "model_tier": m.get("model_tier"),
        "artifact_sha256": m.get("artifact_sha256"),
        "code": lookup(m, "revisions", "code"),
        "machine": fact("machine"),
        "os": str(os_text),
        "power_source": fact("power_source"),
        "power_mode": fact("power_mode"),
        "prompts": f"{seq.n:,} prompts, SHA-256 {seq.sha256 or NOT_RECORDED}",
        "repetitions": repetitions(view),
        "warmup": m.get("warmup_iterations"),
        "trials_per_policy": m.get("trials_per_policy"),
        "baseline": m.get("baseline_policy"),
        "minimums": (
            f"sampling every {mins.get('sampling_interval_s')} s; a window of at "
            f"least {mins.get('window_seconds')} s, {mins.get('sample_periods')} "
            f"readings, {mins.get('counter_updates')} counter updates; gaps over "
            f"{minimums(view)['gap_factor']:g} periods"
        )
        if mins
        else NOT_RECORDED,
        "gates": json_safe(m.get("gates")),
        "floor": lookup(m, "placement", "operation_share_floor"),
        "reference": lookup(m, "reference", "artifact_file") or lookup(m, "reference", "artifact"),
        "timer_scope": m.get("timer_scope") or NOT_RECORDED,
        "notes": m.get("notes"),
    }


def sections(
    view: RunView, result: AuditResult, *, inputs: Mapping[str, tuple[Any, str]] | None = None
) -> dict[str, Any]:
    """Protocol B's part of the report's view model (its report takes no input file)."""
    verdicts = policy_verdicts(view, result)
    notes = EnergyNotes()
    trial_rows = trials_section(view, notes)  # first: the trials' reasons are the notes
    policy_rows = comparison_section(view, verdicts, notes)
    return {
        "summary": summary_section(view, result, summarize(view, result), notes),
        "policies": policy_rows,
        "power": power_section(view),
        "trials": trial_rows,
        "energy_notes": notes.notes,
        "placement": placement_section(view),
        "measured": measured_section(view),
    }


def attachments(view: RunView) -> list[tuple[str, str]]:
    """The run files the signed PDF carries besides the manifest: the two tables and every
    raw power trace and placement file."""
    out = [
        (TRIALS, "One row per trial: what the run claims for it"),
        (POLICIES, "One row per policy: what the run claims for it"),
    ]
    out += [
        (ev.path, f"Raw power trace of {pid} trial {k} ({ev.tool or 'unknown tool'})")
        for (pid, k), ev in sorted(view.power.items())
    ]
    out += [
        (ev.path, f"Raw placement evidence of {pid} ({ev.tool or 'unknown tool'})")
        for pid, evs in sorted(view.placement.items())
        for ev in evs
    ]
    return out


def finding_scope(view: RunView, finding: Finding) -> str | None:
    """The policy or trial a finding is about, in words."""
    return finding.subject.describe() if finding.subject is not None else None


def figures(vm: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """The figures of protocol B's sections: name -> (plot kind, its data from VM)."""
    return {
        "power": ("power_traces", vm["power"]),
        "placement": ("placement_shares", vm["placement"]),
    }


REPORT = ReportPart(
    template=TEMPLATE,
    sections=sections,
    figures=figures,
    finding_scope=finding_scope,
    attachments=attachments,
)
