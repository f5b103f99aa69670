"""What every protocol's run summary shares: the `RunSummary` of an audited run around the
configurations its protocol summarised (`auditor/protocols/<p>/summary.py`). The summary is a
fact of the protocol, read by page 1 of the report, the archive index and `audit compare`
alike, so none of them computes a verdict or a figure of its own."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from auditor.model import ConfigSummary, RunSummary

MANIFEST = "manifest.json"


def summary_of(view: Any, result: Any, configs: Iterable[ConfigSummary]) -> RunSummary:
    """The RunSummary of an audited run whose configurations the protocol summarised."""
    first_error = next((f for f in result.findings if f.severity == "error"), None)
    return RunSummary(
        run_dir=result.run_dir, manifest_sha256=view.files_on_disk.get(MANIFEST),
        protocol=result.protocol, experiment_id=result.experiment_id, verdict=result.verdict,
        counts=tuple(result.counts().items()), configurations=tuple(configs),
        main_reason=first_error.message if first_error else None)
