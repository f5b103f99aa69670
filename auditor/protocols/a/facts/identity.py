"""What a protocol A run is, from its own files (PROTOCOL.md, decisions for both protocols):
its workload (corpus, model, tokenizer and config revisions, each the SHA-256 of the file(s)
its kind names as `rundir.scan` hashed them, never the revision the manifest declares), the
recipe of a model trained at run time, the machine (the host, the GPUs the placement
evidence shows with their UUIDs) and the session's span (the timeline's first start and
last end). The archive keeps it per run, and `audit compare` lets only runs of the same
workload share a row.

The model, tokenizer, config and recipe revisions are the ones A0106 checks the manifest
against (`facts/revisions.py`, schemas/revision-kinds.json: one derivation); a model kept
only as ONNX is its `.onnx`. The corpus is the corpus the run evaluates (the expected IDs,
the references, the splits and the inputs file: the run keeps no train or tune text, so the
corpus revision the manifest declares, over all of them, cannot be recomputed; these files
are the corpus as the run holds it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from auditor.model import RunIdentity
from auditor.present import lookup
from auditor.protocols.a.facts.gpus import gpu_index
from auditor.protocols.a.facts.revisions import kept_revisions, trained_at_run_time
from auditor.protocols.cache import per_view
from auditor.protocols.identity import files_of, gpu_label, revision, text

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView

CORPUS_FILES = ("corpus/expected_ids.txt", "corpus/references.jsonl", "corpus/splits/*")
"""The corpus as the run holds it (`fnmatch` patterns), with the inputs file."""
ONNX_ONLY = ("model/*.onnx",)
"""The weights of a model the run keeps only as ONNX (no weights file of its revision kind)."""


@per_view
def run_identity(view: RunView) -> RunIdentity:
    """The run's `RunIdentity`, from the hashes of its files and its environment and
    placement records."""
    files = view.files_on_disk
    kept = kept_revisions(view)
    corpus = files_of(files, CORPUS_FILES)
    if view.inputs_path and files.get(view.inputs_path):
        corpus[view.inputs_path] = files[view.inputs_path]
    model = kept["model"].revision
    if model is None and not kept["model"].files:
        model = revision(files_of(files, ONNX_ONLY))
    m = view.manifest or {}
    env = view.environment or {}
    trained = trained_at_run_time(view)
    span = _span(view)
    host = lookup(env, "host") or {}
    return RunIdentity(
        corpus=revision(corpus),
        model=model,
        tokenizer=kept["tokenizer"].revision,
        config=kept["config"].revision,
        recipe=kept["recipe"].revision if trained else None,
        trained=trained,
        name=text(lookup(m, "workload", "name")),
        host=(
            text(host.get("model")) or _short("host", text(host.get("hostname_sha256")))
            if isinstance(host, dict)
            else None
        ),
        cpu=text(lookup(env, "cpu", "model")),
        gpus=_gpus(view),
        started_at=span[0],
        ended_at=span[1],
    )


def _short(what: str, sha: str | None) -> str | None:
    return f"{what} sha256:{sha[:12]}" if sha else None


def _gpus(view: RunView) -> tuple[str, ...]:
    """The GPUs the passes' device maps show, as their identity records name them."""
    out: set[str] = set()
    for doc in view.placement.values():
        held = {
            gpu_index(d)
            for part in ("parameter_devices", "input_devices")
            for d, n in (doc.get(part) or {}).items()
            if n > 0
        }
        for g in doc.get("gpus_used") or []:
            if isinstance(g, dict) and g.get("index") in held and (label := gpu_label(g)):
                out.add(label)
    return tuple(sorted(out))


def _span(view: RunView) -> tuple[str | None, str | None]:
    """The timeline's first start and last end, ISO 8601 in UTC."""
    tl = view.timeline
    if tl is None or tl.height == 0 or "started" not in tl.columns:
        return None, None
    first, last = tl["started"].min(), tl["ended"].max()

    def iso(t: object) -> str | None:
        return (
            None
            if t is None
            else t.isoformat(  # type: ignore[attr-defined]
                timespec="microseconds"
            ).replace("+00:00", "Z")
        )

    return iso(first), iso(last)
