"""What a protocol B run is, from its own files (PROTOCOL.md, decisions for both protocols):
its workload (the fixed prompt sequence and its references: the corpus; the model artifact
measured, its tokenizer and config: each revision the SHA-256 of the file(s) its kind names,
as `rundir.scan` hashed them, never a revision the manifest declares), the machine (the
machine model, CPU and GPUs environment.json observed) and the session's span (the first
trial's start, the last one's end, as the trial windows were recomputed). The archive keeps
it per run, and `audit compare` lets only runs of the same workload share a row.

The model is the file `artifact.file` names (B1: the artifact every policy derives from)
when the run holds it, its SHA-256 taken from the file; otherwise the weights found by name
(`REVISION_FILES`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from auditor.model import RunIdentity
from auditor.present import lookup
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.cache import per_view
from auditor.protocols.identity import files_of, gpu_label, iso_utc, revision, text

if TYPE_CHECKING:
    from auditor.protocols.b.view import RunView

REVISION_FILES: dict[str, tuple[str, ...]] = {
    "model": ("model/*.safetensors", "model/weights.*", "model/pytorch_model*.bin"),
    "tokenizer": ("model/tokenizer.json",),
    "config": ("model/config.json",),
    "corpus": ("prompts/sequence.jsonl", "corpus/references.jsonl"),
}
"""Revision kind -> the run dir paths (`fnmatch` patterns) whose SHA-256 is its revision."""


@per_view
def run_identity(view: RunView) -> RunIdentity:
    """The run's `RunIdentity`, from the hashes of its files, its environment record and
    its trials' windows."""
    files = view.files_on_disk
    m = view.manifest or {}
    env = view.environment or {}
    kinds = {k: files_of(files, pats) for k, pats in REVISION_FILES.items()}
    named = lookup(m, "artifact", "file")
    if isinstance(named, str) and files.get(named):
        kinds["model"] = {named: files[named]}
    windows = [t for t in trials(view) if t.start is not None and t.end is not None]
    gpus = lookup(env, "gpus")
    return RunIdentity(
        corpus=revision(kinds["corpus"]),
        model=revision(kinds["model"]),
        tokenizer=revision(kinds["tokenizer"]),
        config=revision(kinds["config"]),
        name=text(lookup(m, "workload", "name")),
        host=text(env.get("machine")),
        cpu=text(lookup(env, "cpu", "model")),
        gpus=tuple(
            sorted({g for g in map(gpu_label, gpus if isinstance(gpus, list) else []) if g})
        ),
        started_at=iso_utc(min((t.start for t in windows), default=None)),  # type: ignore[type-var]
        ended_at=iso_utc(max((t.end for t in windows), default=None)),  # type: ignore[type-var]
    )


def context(view: RunView) -> int | None:
    """The context (tokens) the workload ran with, where the manifest records it."""
    c = lookup(view.manifest or {}, "workload", "context")
    return c if isinstance(c, int) and not isinstance(c, bool) else None
