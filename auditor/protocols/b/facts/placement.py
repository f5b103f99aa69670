"""Where each policy of a protocol B run really ran, from its raw placement evidence: the
shares of the file that decides (`placement_files`: each file read on its own, which decides
where two disagree), what that means for the run, and whose file it is.

**The runtime, provider and device come from the evidence** (`runtime_of`): the runtime the
deciding file is evidence of (`placement_files`), else as declared: the declared `runtime`
only stands where the evidence says nothing.

**Residency** (`residency`): an accelerator policy ran on its accelerator unless a fallback
is recorded (by its evidence or the manifest), its session holds another provider than the
one declared, its share lies below its floor (or none is declared), or its report is cut
short: a report cut short (its reader's `truncated` faults) covers only part of the
operations, so its shares support no claim and show no floor met.

**Whose file it is** (`runtime_mismatch`, `placement_of_other`): a file of another runtime's
session than the policy declares, or one that records another policy or another model, is
not the policy's evidence.

**Capture time**: a file is of this session when its capture time (where its format records
one) lies at or after the declaration (within `CLOCK_TOLERANCE_S`: a time written to the
second) and no later than `CAPTURE_MARGIN_S` after the last trial's end."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from auditor.protocols.b.facts.claims import FLOAT_EPS
from auditor.protocols.b.facts.declared import WINDOWS_ML_RUNTIMES, policies
from auditor.protocols.b.facts.placement_files import Placement, read_placement
from auditor.protocols.b.facts.trials import run_span
from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.b.view import RunView

CAPTURE_MARGIN_S = 3600.0
"""Placement evidence captured more than this after the last trial's end is not of this
session."""
CLOCK_TOLERANCE_S = 1.0
"""A capture time this far before the declaration is still after it: a time written to the
second."""

RUNTIME_FAMILY = {
    "coreml": "coreml",
    "torch": "torch",
    "onnxruntime": "onnxruntime",
    **dict.fromkeys(WINDOWS_ML_RUNTIMES, "onnxruntime"),
}
"""Runtime -> the family whose evidence it writes (Windows ML runs ONNX Runtime)."""


@per_view
def placements(view: RunView) -> dict[str, Placement]:
    """Per policy with placement files, what they show (`placement_files`' rules)."""
    pols = policies(view)
    return {pid: read_placement(pid, pols.get(pid), files) for pid, files in view.placement.items()}


def runtime_of(view: RunView, pid: str) -> str:
    """The runtime policy PID ran, from its placement evidence where that says (module
    docstring), else as declared (lower case)."""
    p = placements(view).get(pid)
    if p is not None and p.runtime:
        return p.runtime
    pol = policies(view).get(pid)
    return pol.runtime.lower() if pol else ""


def is_windows_ml(view: RunView, pid: str) -> bool:
    """Whether PID is a Windows ML session: declared so, or its evidence records one."""
    pol = policies(view).get(pid)
    return runtime_of(view, pid) == "windows-ml" or (
        pol is not None and pol.runtime.lower() in WINDOWS_ML_RUNTIMES
    )


def is_coreml(view: RunView, pid: str) -> bool:
    """Whether PID runs Core ML: declared so, or its evidence is a Core ML report."""
    pol = policies(view).get(pid)
    return runtime_of(view, pid) == "coreml" or (
        pol is not None and pol.runtime.lower() == "coreml"
    )


def runtime_mismatch(view: RunView, p: Placement) -> str | None:
    """Why P's evidence is of another runtime than the policy declares, or None."""
    pol = policies(view).get(p.policy_id)
    if pol is None or p.runtime is None:
        return None
    declared = RUNTIME_FAMILY.get(pol.runtime.lower())
    if declared is None or declared == RUNTIME_FAMILY.get(p.runtime, p.runtime):
        return None
    return f"it is evidence of a {p.runtime} session, the policy declares runtime {pol.runtime!r}"


def capture_outside(view: RunView, p: Placement) -> str | None:
    """Why P's capture time (where its format records one) is not of this run's session."""
    if p.captured_at is None:
        return None
    start, end = run_span(view)
    if start is not None and p.captured_at < start - CLOCK_TOLERANCE_S:
        return "captured before the run was declared"
    if end is not None and p.captured_at > end + CAPTURE_MARGIN_S:
        return "captured after the run's last trial"
    return None


def _package(path: str) -> str | None:
    """The Core ML package a model path names (`file:///tmp/PurposeDeepF16.mlmodelc/` ->
    `purposedeepf16`: a compiled `.mlmodelc` is its `.mlpackage`'s), None when the path
    names no Core ML package."""
    name = PurePosixPath(path.removeprefix("file://").rstrip("/")).name.lower()
    return next(
        (
            name[: -len(ext)]
            for ext in (".mlmodelc", ".mlpackage", ".mlmodel")
            if name.endswith(ext)
        ),
        None,
    )


def placement_of_other(view: RunView, p: Placement) -> str | None:
    """Why P's file (where its format names them) records another policy or another model
    than the policy it stands for: the record's `policy_id`, its model's SHA-256 against
    the artifact the policy declares it runs (`policies[].artifact_sha256`), and the Core
    ML package a compute plan or profile names against the package the policy declares
    (`policies[].artifact_file`, else the manifest's `artifact.file`, when a Core ML
    package)."""
    pol = policies(view).get(p.policy_id)
    if p.record_policy is not None and p.record_policy != p.policy_id:
        return f"it records policy {p.record_policy!r}, not {p.policy_id!r}"
    want = pol.artifact_sha256 if pol is not None else None
    if (
        p.model_sha256 is not None
        and isinstance(want, str)
        and p.model_sha256.lower() != want.lower()
    ):
        return (
            f"it placed the model {p.model_sha256[:16]}..., the policy runs the artifact "
            f"{want[:16]}..."
        )
    art = pol.artifact_file if pol is not None else None
    if not isinstance(art, str):
        art = (view.m.get("artifact") or {}).get("file")
    placed = _package(p.model_path) if p.model_path else None
    runs = _package(art) if isinstance(art, str) else None
    if placed is not None and runs is not None and placed != runs:
        return (
            f"it is the plan of the package "
            f"{PurePosixPath(str(p.model_path).rstrip('/')).name}, the policy runs {art}"
        )
    return None


def residency(view: RunView, pid: str) -> str | None:
    """Why accelerator policy PID did not run on its accelerator (a fallback the evidence or
    the manifest records, a session holding another provider than the one declared, a share
    below its floor, no declared floor, a report cut short), or None when it did (or there
    is no evidence to say)."""
    pol = policies(view).get(pid)
    if pol is None or pol.role != "accelerator":
        return None
    p = placements(view).get(pid)
    if p is not None and not p.problem and p.fallback:
        return p.fallback
    if pol.recorded_fallback:
        return pol.recorded_fallback
    if p is None or p.problem:
        return None
    if pol.provider and p.session_provider and p.session_provider != pol.provider:
        return (
            f"its session holds {p.session_provider} first ({p.used}), not the "
            f"{pol.provider} declared"
        )
    if pol.floor is None:
        return "no operation-share floor is declared for it"
    if p.operation_share is None:
        return "its placement evidence gives no operation share"
    if p.operation_share < pol.floor - FLOAT_EPS:
        where = "/".join(sorted(pol.accelerator))
        return (
            f"{p.operation_share:.2%} of its operations ran on {where}, below the "
            f"declared floor of {pol.floor:.2%}"
        )
    if p.truncated:
        return (
            f"its placement report {p.used} is cut short (line {p.truncated[0]}): a share "
            f"over part of the operations cannot show the floor is met"
        )
    return None
