"""What `audit replay` concluded about one run: a small frozen result that the text and JSON
renderers and the report draw (`schemas/replay-result.schema.json`).

The verdict follows `audit check`'s words and logic on replay's own findings only: `accepted`
(every judged answers file agrees with the archived model), `rejected` (an error finding),
`incomplete` (the run is not replayable, or evidence replay needs is missing). It says
nothing of the run's `audit check` verdict, which is a separate question.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.model import Finding, Verdict
from auditor.replay.compare import Agreement
from auditor.replay.sample import Sample

SCHEMA_VERSION = "1"
NEVER_EXECUTED = (
    "Only the ONNX graph named by the manifest was executed (ONNX Runtime, CPU "
    "execution provider, standard operators only); the tokenizer was applied "
    "from its data by the auditor's own implementation of its kind; no code "
    "from the run directory was imported or run."
)


@dataclass(frozen=True)
class ReplayResult:
    run_dir: str
    protocol: str
    experiment_id: str | None
    manifest_sha256: str
    sample: Sample | None
    """None when replay stopped before drawing (not replayable, an artifact refused)."""
    model: dict[str, Any] | None
    """The model replayed: file, sha256, opset, runtime; None when it never ran."""
    tokenizer: dict[str, Any] | None
    files: tuple[Agreement, ...]
    """One per answers file compared."""
    findings: tuple[Finding, ...]

    @property
    def verdict(self) -> Verdict:
        if any(f.severity == "error" and not f.missing_evidence for f in self.findings):
            return "rejected"
        if any(f.missing_evidence for f in self.findings):
            return "incomplete"
        return "accepted"

    @property
    def exit_code(self) -> int:
        """0 when the agreement is met (a warning included), 1 for an error finding (not
        replayable included)."""
        return 1 if any(f.severity == "error" for f in self.findings) else 0

    def counts(self) -> dict[str, int]:
        out = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            out[f.severity] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "run_dir": self.run_dir,
            "protocol": self.protocol,
            "experiment_id": self.experiment_id,
            "manifest_sha256": self.manifest_sha256,
            "verdict": self.verdict,
            "counts": self.counts(),
            "sample": self.sample.to_json() if self.sample else None,
            "model": self.model,
            "tokenizer": self.tokenizer,
            "executed": NEVER_EXECUTED if self.model else None,
            "files": [a.to_json() for a in self.files],
            "findings": [f.to_json() for f in self.findings],
        }
