"""Page 1 of protocol B's report: the verdict of every compute policy first, with its median
wall time, p95 latency, average power, joules per inference and operation share against its
floor, then what to decide (and the cautions: a busy machine, energy not measured, energy
measured on a candidate rejected at a gate)."""

from __future__ import annotations

from typing import Any

from auditor.model import AuditResult, RunSummary
from auditor.protocols import machine
from auditor.protocols.b.facts.placement import placements
from auditor.protocols.b.report.notes import EnergyNotes
from auditor.protocols.b.report.text import fmt, pct, policy_figures
from auditor.protocols.b.view import RunView

TONE = {"accepted": "ok", "baseline": "muted", "rejected": "bad", "incomplete": "muted"}


def summary_section(
    view: RunView, result: AuditResult, summary: RunSummary, notes: EnergyNotes | None = None
) -> dict[str, Any]:
    """Page 1: every policy's verdict and figures, then what to decide (why energy is
    missing: a reference to NOTES, where the reason is said)."""
    rows = []
    for c in summary.configurations:
        x = policy_figures(c)
        # every policy's share from its placement evidence: an accelerator's against its
        # floor, a CPU-only policy's on the CPU (what its policies.csv row records, 1.000)
        cpu = placements(view).get(c.config_id) if x.role != "accelerator" else None
        share = (
            f"{pct(x.operation_share)} (floor {pct(x.operation_share_floor)})"
            if x.role == "accelerator"
            else f"{pct(cpu.cpu_node_share)} on the CPU"
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
                    "median": fmt(c.median_s, "s"),
                    "p95": fmt(x.p95_ms, "ms"),
                    "power": (
                        fmt(x.avg_power_w, "W") if x.avg_power_w is not None else "not measured"
                    ),
                    "jpi": (
                        fmt(x.joules_per_inference, "J")
                        if x.joules_per_inference is not None
                        else "not measured"
                    ),
                    "share": share,
                },
            }
        )
    accepted = [c for c in summary.configurations if c.verdict == "accepted"]
    accel = [c for c in summary.configurations if policy_figures(c).role == "accelerator"]
    decision = []
    if accepted:
        best = min(
            accepted, key=lambda c: (policy_figures(c).joules_per_inference or 0, c.config_id)
        )
        bx = policy_figures(best)
        decision.append(
            f"Accepted: {', '.join(c.config_id for c in accepted)}: each ran on its "
            "accelerator at or above its floor, passed the gates, and drew less average power "
            "and fewer joules per inference than the CPU-only baseline on the same power "
            f"source. Lowest energy per inference: {best.config_id}, "
            f"{fmt(bx.joules_per_inference, 'J')} ({bx.energy_source})."
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
            policy_figures(c).energy_missing or ""
            for c in summary.configurations
            if policy_figures(c).energy_missing and c.median_s is not None
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
