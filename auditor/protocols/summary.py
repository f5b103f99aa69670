"""What every protocol's run summary shares: the `RunSummary` of an audited run around the
configurations its protocol summarised (`auditor/protocols/<p>/summary.py`). The summary is a
fact of the protocol, read by page 1 of the report, the archive index and `audit compare`
alike, so none of them computes a verdict or a figure of its own."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from auditor.model import ConfigSummary, Finding, RunIdentity, RunSummary

MANIFEST = "manifest.json"


def deciding_finding(result: Any) -> Finding | None:
    """The finding that decides RESULT's verdict: for a rejected run its first error that is
    not missing evidence (what rejects it), for an incomplete one its first error of missing
    evidence; None for an accepted run, or one incomplete only by a rule that did not run."""
    errors = [f for f in result.findings if f.severity == "error"]
    if result.verdict == "rejected":
        return next((f for f in errors if not f.missing_evidence), None)
    if result.verdict == "incomplete":
        return next((f for f in errors if f.missing_evidence), None)
    return None


def main_reason(result: Any) -> str | None:
    """Why RESULT is not accepted, in one line: the deciding finding's code and message
    (`A0205: claimed quality_value ... differs ...`), else the first rule that could not run;
    None when accepted. The code and the message are one finding's, never two."""
    if result.verdict == "accepted":
        return None
    f = deciding_finding(result)
    if f is not None:
        return f"{f.code}: {f.message}"
    if result.skipped:
        s = result.skipped[0]
        return f"{s.code} could not run: {s.reason}"
    left_out = next(iter(getattr(result, "unwaived", ())), None)
    return f"{left_out.code} was left out without a waiver" if left_out is not None else None


def summary_of(
    view: Any, result: Any, configs: Iterable[ConfigSummary], identity: RunIdentity | None = None
) -> RunSummary:
    """The RunSummary of an audited run whose configurations and identity (what the run is:
    `facts/identity.py`) the protocol derived."""
    return RunSummary(
        run_dir=result.run_dir,
        manifest_sha256=view.files_on_disk.get(MANIFEST),
        protocol=result.protocol,
        experiment_id=result.experiment_id,
        verdict=result.verdict,
        counts=tuple(result.counts().items()),
        configurations=tuple(configs),
        main_reason=main_reason(result),
        identity=identity,
    )
