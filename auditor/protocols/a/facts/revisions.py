"""What the run's revisions pin, recomputed from the files it keeps (A1.2, A3.3): per revision
kind the files under `model/` that kind names and their hash, the recipe a workload trained
at run time must state, the archived ONNX file's hash, and how many evaluation texts the
archived tokenizer cuts.

Which files a kind names is data (`schemas/revision-kinds.json`), read here, by the runner
that writes the revisions and by the comparison of runs: weights are `model.safetensors`, or
every shard `model-NNNNN-of-NNNNN.safetensors` (one revision over all of them, the hash of
their `sha256sum` listing), or, for a workload trained at run time, the file it wrote
(`trained_files`); the tokenizer is `tokenizer.json`; the config `config.json`; the recipe
`recipe.json`. A run that keeps no file under `model/` pins nothing the auditor can hash:
its revisions are then only compared with their restatements (A0102)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import schemas
from auditor.protocols.a.artifacts import SPLITS
from auditor.protocols.cache import per_view
from auditor.protocols.identity import revision as combined_revision

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView


@cache
def revision_kinds() -> dict[str, Any]:
    """`schemas/revision-kinds.json`: folder, kinds (files, shards, trained_files, required)."""
    return schemas.data("revision_kinds")


@dataclass(frozen=True)
class Kept:
    """What one revision kind names among the files the run keeps."""

    kind: str
    files: tuple[str, ...]
    """The run-dir paths of the files the kind names (empty: the run keeps none)."""
    revision: str | None
    """`sha256:<hex>` recomputed from those files; None when there are none or they cannot
    pin a revision (`problem`)."""
    problem: str | None = None
    """Why the files cannot pin a revision: a shard missing, two weights files."""
    trained: bool = False
    """The weights are a file only a workload trained at run time writes."""


def _shards(names: list[str], pattern: str) -> tuple[list[str], str | None]:
    """The shard files among NAMES and, when the set is not whole, why."""
    rx = re.compile(pattern)
    found = {n: m for n in names if (m := rx.match(n))}
    if not found:
        return [], None
    totals = {int(m["total"]) for m in found.values()}
    indexes = {int(m["index"]) for m in found.values()}
    if len(totals) != 1:
        return sorted(found), f"the shards disagree on their number ({sorted(totals)})"
    total = totals.pop()
    missing = sorted(set(range(1, total + 1)) - indexes)
    extra = sorted(i for i in indexes if not 1 <= i <= total)
    if missing or extra:
        return sorted(found), (
            f"shard(s) {missing or extra} of {total} {'missing' if missing else 'out of range'}"
        )
    return sorted(found), None


@per_view
def kept_revisions(view: RunView) -> Mapping[str, Kept]:
    """Per revision kind (`revision-kinds.json`), the files it names under `model/` and the
    revision they pin, from the hashes of the run-dir walk (never from a declaration)."""
    spec = revision_kinds()
    folder = spec["folder"]
    on_disk = {
        p[len(folder) :]: h
        for p, h in view.files_on_disk.items()
        if p.startswith(folder) and "/" not in p[len(folder) :] and h
    }
    names = sorted(on_disk)
    out: dict[str, Kept] = {}
    for kind, k in spec["kinds"].items():
        chosen = [n for n in k["files"] if n in on_disk]
        problem, trained = None, False
        if not chosen and k.get("shards"):
            chosen, problem = _shards(names, k["shards"])
        if not chosen and k.get("trained_files"):
            chosen = [n for n in k["trained_files"] if n in on_disk]
            trained = bool(chosen)
            if len(chosen) > 1:
                problem = f"several weights files ({', '.join(chosen)}): which one ran?"
        files = tuple(folder + n for n in chosen)
        revision = (
            combined_revision({n: on_disk[n] for n in chosen})
            if chosen and problem is None
            else None
        )
        out[kind] = Kept(kind, files, revision, problem, trained)
    return MappingProxyType(out)


def keeps_model_files(view: RunView) -> bool:
    """Whether the run keeps any file under `model/` (else its revisions cannot be hashed)."""
    folder = revision_kinds()["folder"]
    return any(p.startswith(folder) for p in view.files_on_disk)


def trained_at_run_time(view: RunView) -> bool:
    """The manifest says the workload trained its weights during the run, or the weights
    kept are a file only such a workload writes."""
    workload = (view.manifest or {}).get("workload") or {}
    return workload.get("trained_at_run_time") is True or kept_revisions(view)["model"].trained


def expected_recipe(view: RunView) -> dict[str, Any]:
    """What `model/recipe.json` must state, from the manifest and the train split's ID list
    as kept (its hash from the walk): the recipe restates them, it never defines them."""
    m = view.manifest or {}
    rev = m.get("revisions") or {}
    workload = m.get("workload") or {}
    variants = m.get("variants") or [{}]
    return {
        "code": rev.get("code"),
        "seed": m.get("seed"),
        "workload": workload.get("callable"),
        "options": workload.get("generation_options") or {},
        "context": variants[0].get("context"),
        "training_inputs": {
            "corpus": rev.get("corpus"),
            "ids_sha256": view.files_on_disk.get(SPLITS["train"]),
        },
    }


@dataclass(frozen=True)
class ArchivedModel:
    """The ONNX file the manifest's `replay.model` names, and what the walk hashed."""

    file: str
    declared: str
    actual: str | None
    """Its SHA-256 as hashed by the walk; None when the run does not keep it."""


def archived_model(view: RunView) -> ArchivedModel | None:
    """The archived ONNX model of the replay section; None without one."""
    replay = (view.manifest or {}).get("replay")
    model = replay.get("model") if isinstance(replay, dict) else None
    if not isinstance(model, dict) or not isinstance(model.get("file"), str):
        return None
    return ArchivedModel(
        model["file"], str(model.get("sha256")), view.files_on_disk.get(model["file"]) or None
    )


@dataclass(frozen=True)
class Truncation:
    """The evaluation texts the archived tokenizer cuts at the declared context (A3.3)."""

    tokenizer: str
    """The tokenizer file applied (the replay section's)."""
    kind: str
    context: int
    counted: int | None
    """How many texts of the inputs file exceed the context; None when not counted."""
    texts: int
    problem: str | None = None
    """Why the count could not be made (the tokenizer does not load or apply)."""


@per_view
def truncation(view: RunView) -> Truncation | None:
    """The truncated texts recounted with the archived tokenizer data (the replay section's
    file and kind, the kinds `audit replay` implements, never code from the run) over the
    evaluation inputs, at the context declared in `corpus.truncation`; None when the run
    archives no tokenizer of a known kind, keeps no inputs, or its bytes were not kept."""
    m = view.manifest or {}
    replay = m.get("replay")
    tok = replay.get("tokenizer") if isinstance(replay, dict) else None
    declared = (m.get("corpus") or {}).get("truncation") or {}
    context = declared.get("context_tokens")
    if (
        not isinstance(tok, dict)
        or view.inputs is None
        or not isinstance(context, int)
        or tok.get("file") not in view.model_data
    ):
        return None
    from auditor.replay import tokenizers  # only a run with an archived tokenizer needs it

    name, kind = tok["file"], str(tok.get("kind"))
    if kind not in tokenizers.KINDS:
        return None
    texts = view.inputs["text"].to_list()
    built, faults = tokenizers.load(view.model_data[name], name=name, kind=kind, context=context)
    if built is None:
        why = faults[0].message if faults else "it does not load"
        return Truncation(name, kind, context, None, len(texts), why)
    try:
        return Truncation(name, kind, context, built.truncated(texts), len(texts))
    except tokenizers.TokenizerFailed as exc:
        return Truncation(name, kind, context, None, len(texts), str(exc))
