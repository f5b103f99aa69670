"""The checkpoint a protocol B run keeps, against what the run records of it (PROTOCOL.md, "A
revision is the SHA-256 of the file(s) its kind names"): the revisions of the manifest
(`revisions.model`, `revisions.tokenizer`) against the SHA-256 of the files of the run they
name, and the checkpoint's label map against the run's classes.

- **Which file a revision names**: the model revision, the weights the run measures (the
  manifest's `artifact.file`, the file whose SHA-256 is `artifact_sha256`); the tokenizer
  revision, the tokenizer the replay section names (`replay.tokenizer.file`), else the run's
  `model/tokenizer.json`. A revision that is no SHA-256 (`sha256:<hex>` or 64 hex digits: a
  hub commit, a version string), or a file the run does not keep, is not compared here.
- **Labels**: the checkpoint's `model/config.json` `id2label`, by index, names the run's
  classes (`task.classes`, as a set) in the order the run maps its scores to labels
  (`replay.labels`, where given)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from auditor.protocols.b.artifacts import CHECKPOINT_CONFIG
from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.b.view import RunView

_SHA = re.compile(r"^(?:sha256:)?(?P<hex>[0-9a-fA-F]{64})$")
TOKENIZER_FILE = "model/tokenizer.json"


@dataclass(frozen=True)
class RevisionMismatch:
    """A revision that is not the SHA-256 of the file its kind names."""

    kind: str
    """`model` or `tokenizer`."""
    file: str
    recorded: str
    actual: str


def _sha(value: Any) -> str | None:
    m = _SHA.match(value) if isinstance(value, str) else None
    return m["hex"].lower() if m else None


def _section(m: dict, key: str) -> dict:
    v = m.get(key)
    return v if isinstance(v, dict) else {}


@per_view
def revision_mismatches(view: RunView) -> tuple[RevisionMismatch, ...]:
    """Each revision of the manifest that is not its file's SHA-256 (module docstring)."""
    m = view.m
    revisions = _section(m, "revisions")
    tok = _section(_section(m, "replay"), "tokenizer").get("file")
    files = {
        "model": _section(m, "artifact").get("file"),
        "tokenizer": tok if isinstance(tok, str) else TOKENIZER_FILE,
    }
    out = []
    for kind, rel in files.items():
        recorded = _sha(revisions.get(kind))
        actual = view.files_on_disk.get(rel) if isinstance(rel, str) else None
        if recorded is not None and actual is not None and actual != recorded:
            out.append(RevisionMismatch(kind, rel, recorded, actual))  # type: ignore[arg-type]
    return tuple(out)


@dataclass(frozen=True)
class LabelMismatch:
    """The checkpoint's label map against the run's classes."""

    labels: tuple[str, ...]
    """`id2label` by index."""
    expected: tuple[str, ...]
    why: str


@per_view
def label_mismatch(view: RunView) -> LabelMismatch | None:
    """How the checkpoint's `id2label` contradicts the run's classes, or None."""
    cfg = view.checkpoint_config or {}
    id2label = cfg.get("id2label")
    if not isinstance(id2label, dict) or not id2label:
        return None
    labels = tuple(str(id2label[k]) for k in sorted(id2label, key=int))
    classes = _section(view.m, "task").get("classes")
    order = _section(view.m, "replay").get("labels")
    if isinstance(classes, list) and set(labels) != {str(c) for c in classes}:
        return LabelMismatch(
            labels,
            tuple(map(str, classes)),
            f"{CHECKPOINT_CONFIG} labels its outputs {', '.join(labels)}; "
            f"the run's classes are {', '.join(map(str, classes))}",
        )
    if isinstance(order, list) and list(labels) != [str(x) for x in order]:
        return LabelMismatch(
            labels,
            tuple(map(str, order)),
            f"{CHECKPOINT_CONFIG} maps outputs 0..{len(labels) - 1} to "
            f"{', '.join(labels)}; the run maps them to "
            f"{', '.join(map(str, order))} (replay.labels)",
        )
    return None
