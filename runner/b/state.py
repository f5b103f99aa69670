"""What the stages of `runner residency` hand each other: the checked inputs, the
declaration fixed before measuring, and each policy's state as it goes through start, gate,
placement and trials."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runner.b.config import PolicySpec
from runner.b.gates import GateResult
from runner.b.policies import ModelFiles, RunningPolicy
from runner.corpus import Corpus
from runner.manifest import Revisions
from runner.model import Threads, TrainedModel
from runner.onnx_export import OnnxExport
from runner.workloads import WorkloadFactory


@dataclass(frozen=True)
class Inputs:
    """Everything checked before anything is measured or written."""

    factory: WorkloadFactory
    corpus: Corpus
    threads: Threads
    policies: tuple[PolicySpec, ...]
    """The policies of the run."""
    left_out: dict[str, str]
    """`when = "available"` policies this machine cannot run -> why."""
    reference_answers: list[dict[str, str]] | None
    """The user's accepted reference answers, when the config names a file."""
    options: dict[str, Any]
    """The workload options, file options resolved (`WorkloadFactory.path_options`)."""
    recorded_options: dict[str, Any]
    """The same as the run records them (`runner.config.recorded_options`)."""
    off_protocol: dict[str, Any] | None = None
    """The manifest's record of a diagnostic run (`runner.conformance.enforce`)."""
    plugins: list[dict[str, Any]] = field(default_factory=list)
    """The plug-in execution provider libraries registered, and how (runner.b.winml)."""


@dataclass(frozen=True)
class Declaration:
    """What is fixed and staged before the first gate, placement pass or trial."""

    ids: list[str]
    """The fixed sequence's prompt IDs, in order (prompts/sequence.jsonl)."""
    texts: list[str]
    classes: tuple[str, ...]
    references: dict[str, str]
    """Prompt ID -> verified label (corpus/references.jsonl)."""
    reference_outputs: dict[str, str]
    """Prompt ID -> the reference artifact's answer (reference/outputs.jsonl)."""
    reference: dict[str, Any]
    """What the reference artifact is, for the manifest and gates.json."""
    sequence_sha256: str
    trained: TrainedModel
    files: ModelFiles
    onnx: OnnxExport | None
    revisions: Revisions
    planned_order: list[tuple[str, int]]
    """(policy_id, trial_index) for every policy of the run, drawn from the seed."""
    declared_at: str
    load_before: list[float] | None
    replay: dict[str, Any]
    """The manifest's `replay` section, or `replay_unavailable` (runner.replay)."""


@dataclass
class PolicyState:
    """One policy of the run as it goes through start, gate, placement and trials."""

    spec: PolicySpec
    running: RunningPolicy | None = None
    cannot_start: str | None = None
    gate: GateResult | None = None
    placement_file: str | None = None
    idle: dict[str, str] = field(default_factory=dict)
    """before/after -> idle trace file."""
    idle_windows: dict[str, tuple[str, str]] = field(default_factory=dict)
    """before/after -> (start, end) of an idle measurement kept from an external log."""
    artifact: tuple[str, str] | None = None
    """(file, sha256) of the artifact this policy runs."""

    @property
    def fault(self) -> str | None:
        return self.running.fault if self.running is not None else None

    def trial_block(self, measure_rejected: bool) -> str | None:
        """Why this policy runs no trial, or None."""
        if self.cannot_start is not None:
            return f"could not start: {self.cannot_start}"
        if self.fault is not None:
            return f"policy fault: {self.fault}; never measured as an accelerator result"
        if self.gate is not None and not self.gate.passed and not measure_rejected:
            return (
                f"rejected at the gate (B8): {'; '.join(self.gate.failures())}; energy "
                "trials skipped (gates.measure_rejected_energy = false)"
            )
        return None
