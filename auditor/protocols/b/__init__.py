"""Protocol B, "energy and accelerator residency" (seed 004; docs/protocol.md B1-B10): the
compute policies of one classifier on one machine and power source (Neural Engine, NPU, GPU,
CPU), judged on where the model really ran and what it cost in energy against the CPU-only
baseline, each figure recomputed from the raw latencies, power traces and placement
evidence, in whatever format their tool wrote them.

The package: `artifacts.py` (what the run dir holds), `view.py` (loading it through the
readers), `facts/` (every fact recomputed from raw evidence, once, one module per family),
`summary.py` (the run's summary: per policy its verdict, why and figures), `rules/` (one
module per rule, `B` codes), `report/` (its report sections, one module per section:
formatting only)."""

from __future__ import annotations

from typing import Any

from auditor.model import Finding, RunSummary
from auditor.protocols.b.artifacts import PARSE_LIMITS, PARSED_PREFIXES, POLICIES, TRIALS
from auditor.protocols.b.comparison import COMPARISON
from auditor.protocols.base import Protocol, ReportPart
from auditor.protocols.names import PROTOCOL_B
from auditor.protocols.sealed import with_csv_line
from auditor.registry import lazy


def _load(files: Any) -> Any:
    from auditor.protocols.b.view import load

    return load(files)


def _locate(view: Any, f: Finding) -> Finding:
    """A CSV row's finding also gets the physical line where the row starts."""
    return with_csv_line(
        f, {TRIALS: view.trials_raw, POLICIES: view.policies_raw}.get(f.artifact or "")
    )


def _summarize(view: Any, result: Any) -> RunSummary:
    from auditor.protocols.b.summary import summarize

    return summarize(view, result)


def _replay_sources(manifest: Any, files: list[str]) -> list[Any]:
    from auditor.protocols.b.replay import sources

    return sources(manifest, files)


PROTOCOL = Protocol(
    name=PROTOCOL_B,
    prefix="B",
    title="Protocol B: energy and accelerator residency",
    rules_package="auditor.protocols.b.rules",
    parsed_prefixes=PARSED_PREFIXES,
    parse_limits=PARSE_LIMITS,
    signature_files=(TRIALS,),
    load=_load,
    internal_error_ref="B10",
    locate=_locate,
    summarize=_summarize,
    comparison=COMPARISON,
    replay_sources=_replay_sources,
    report=lazy("auditor.protocols.b.report", "REPORT", ReportPart),
)
