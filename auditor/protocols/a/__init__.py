"""Protocol A, "an accepted corpus before cost" (seed 000; docs/protocol.md A1-A10): batch
variants of one classifier over a fixed evaluation corpus, judged on the corpus accepted
(IDs exactly once, valid format, quality rule met) before any cost is compared.

The package: `artifacts.py` (what the run dir holds), `view.py` (loading it through the
readers), `facts/` (every fact recomputed from raw evidence, once per view, one module per
concern), `rules/` (one module per rule, `A` codes), `economics.py` (the package
calculation), `summary.py` (the run's summary: what the archive, `audit compare` and page 1
read), `report/` (its report sections, formatting the facts and the summary)."""

from __future__ import annotations

import dataclasses
from typing import Any

from auditor.model import Finding, RunSummary
from auditor.protocols.a.artifacts import PARSED_PREFIXES, RESULTS, STREAMED_PREFIXES
from auditor.protocols.a.comparison import COMPARISON
from auditor.protocols.base import Protocol, ReportPart
from auditor.protocols.names import PROTOCOL_A
from auditor.protocols.sealed import with_csv_line
from auditor.registry import lazy


def _load(files: Any) -> Any:
    from auditor.protocols.a.view import load

    return load(files)


def _locate(view: Any, f: Finding) -> Finding:
    """A CSV row's finding also gets the physical line where the row starts (SARIF and
    GitHub annotations point at lines), and a finding that does not name what it is about
    gets the pass of its file or row."""
    from auditor.protocols.a.view import pass_subject

    f = with_csv_line(f, view.results_raw) if f.artifact == RESULTS else f
    if f.subject is None:
        subject = pass_subject(view, f)
        if subject is not None:
            f = dataclasses.replace(f, subject=subject)
    return f


def _summarize(view: Any, result: Any) -> RunSummary:
    from auditor.protocols.a.summary import summarize

    return summarize(view, result)


def _replay_sources(manifest: Any, files: list[str]) -> list[Any]:
    from auditor.protocols.a.replay import sources

    return sources(manifest, files)


PROTOCOL = Protocol(
    name=PROTOCOL_A,
    prefix="A",
    title="Protocol A: an accepted corpus before cost",
    rules_package="auditor.protocols.a.rules",
    parsed_prefixes=PARSED_PREFIXES,
    streamed_prefixes=STREAMED_PREFIXES,
    signature_files=(RESULTS,),
    load=_load,
    internal_error_ref="A10.1",
    locate=_locate,
    summarize=_summarize,
    comparison=COMPARISON,
    replay_sources=_replay_sources,
    report=lazy("auditor.protocols.a.report", "REPORT", ReportPart),
)
