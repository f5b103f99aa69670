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

One module per section: `page_one` (page 1), `policies` (the policy comparison), `trials`
(the power traces and every trial), `placement` (placement shares per policy), `measured`
(what was measured); `notes` numbers the reasons energy was not measured, `text` writes the
figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.model import AuditResult, Finding
from auditor.protocols.b.artifacts import POLICIES, TRIALS
from auditor.protocols.b.report.measured import measured_section
from auditor.protocols.b.report.notes import EnergyNotes
from auditor.protocols.b.report.page_one import summary_section
from auditor.protocols.b.report.placement import placement_section
from auditor.protocols.b.report.policies import comparison_section
from auditor.protocols.b.report.trials import power_section, trials_section
from auditor.protocols.b.summary import policy_verdicts, summarize
from auditor.protocols.b.view import RunView
from auditor.protocols.base import ReportPart

TEMPLATE = "protocol_b.html.j2"
"""The sections of protocol B in the report page (included by report.html.j2)."""


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
