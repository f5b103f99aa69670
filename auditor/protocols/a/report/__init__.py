"""Protocol A's part of the signed report (`REPORT`): its sections of the report's view
model, each formatted from the facts (`auditor/protocols/a/facts/`) and the run's summary
(`auditor/protocols/a/summary.py`), never from the run's own claims. The tree holds only
JSON values, so it can be compared with a golden file and rendered by any template.

One module per section: `page_one` (the executive summary, from the same `Summary` an archive
keeps, so the archive and page 1 can never disagree), `measured` (what was measured),
`timings` (every pass, the warm median and range, cold apart, never a p95), `notes` (the
pass notes, each once), `memory` (with the source of each figure), `economics` (per offer
the package cost and the cost per accepted corpus or why not); `text` writes the figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor.model import AuditResult, Finding
from auditor.protocols.a.report.economics import economics_section
from auditor.protocols.a.report.measured import measured_section
from auditor.protocols.a.report.memory import memory_section
from auditor.protocols.a.report.notes import factor_common_notes, own_notes
from auditor.protocols.a.report.page_one import summary_section
from auditor.protocols.a.report.timings import pass_matrix, timings_section
from auditor.protocols.a.summary import summary
from auditor.protocols.base import ReportPart

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView

TEMPLATE = "protocol_a.html.j2"
"""The sections of protocol A in the report page (included by report.html.j2)."""


def sections(
    view: RunView, result: AuditResult, *, inputs: Mapping[str, tuple[Any, str]] | None = None
) -> dict[str, Any]:
    """Protocol A's part of the report's view model; INPUTS' `offers` (data, label)
    overrides the run's own offers (`audit report --offers`)."""
    offers, offers_label = (inputs or {}).get(
        "offers", (view.offers, "economics/offers.json (the run's own offers)")
    )
    s = summary(view, result, offers)
    econ = economics_section(s, offers_label or "not given")
    timings = timings_section(view)
    # What every row repeats is shown once; what the run notes already say, not again.
    common = factor_common_notes(timings)
    run_notes = set(str((view.manifest or {}).get("notes") or "").split("; "))
    parts = common.split("; ") if common else []
    notes_common = "; ".join(part for part in parts if part not in run_notes)
    qvals = [
        p["quality_value"] for t in timings for p in t["passes"] if p["quality_value"] is not None
    ]
    measured = measured_section(view, qvals)
    decimals = (measured["quality_rule"] or {}).get("decimals", 4)
    return {
        "summary": summary_section(s, econ),
        "measured": measured,
        "timings": timings,
        "pass_matrix": pass_matrix(timings, decimals),
        "notes_common": notes_common,
        "notes_common_in_run": any(part in run_notes for part in parts),
        "notes_own": own_notes(timings),
        "memory": memory_section(view),
        "economics": econ,
    }


def attachments(view: RunView) -> list[tuple[str, str]]:
    """The run files the signed PDF carries besides the manifest: the raw results."""
    return [("resultats-bruts.csv", "The raw results, one row per pass")]


def finding_scope(view: RunView, finding: Finding) -> str | None:
    """The pass or variant a finding is about, in words (`batch-4 warm pass 2`); None when
    it is about the whole run."""
    return finding.subject.describe() if finding.subject is not None else None


def figures(vm: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """The figures of protocol A's sections: name -> (plot kind, its data from VM)."""
    return {
        "durations": ("durations", vm["timings"]),
        "memory": ("memory", vm["memory"]["variants"]),
        "cost": ("cost", vm["economics"]),
    }


def _offers(path: Path) -> dict[str, Any]:
    """`audit report --offers FILE`: the offers to cost instead of the run's own (A9)."""
    from auditor.protocols.a.economics import load_offers

    return load_offers(path)


REPORT = ReportPart(
    template=TEMPLATE,
    sections=sections,
    figures=figures,
    finding_scope=finding_scope,
    attachments=attachments,
    inputs={"offers": _offers},
)
