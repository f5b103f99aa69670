"""A0106: each revision is the SHA-256 of the file(s) its kind names, recomputed.

What it checks: when the run keeps files under `model/`, each revision kind of
`schemas/revision-kinds.json` is the hash of the files that kind names, hashed by the
auditor: `revisions.model` of `model.safetensors`, of every shard together, or of the
weights a workload trained at run time wrote; `revisions.tokenizer` of `tokenizer.json`;
`revisions.config` of `config.json` and `revisions.recipe` of `recipe.json` (each required
when the file is kept). The weights and the tokenizer must be kept; a shard set must be
whole; a revision that names no kept file pins nothing.
Reads: manifest `/revisions`; the names and hashes of the files under `model/`.
Why it matters: A1.2 pins the model and tokenizer, and the decision on revisions says a
revision is the hash of the file its kind names. A model revision that is the hash of
`tokenizer.json` or `config.json` leaves the weights unpinned: any weights could have run.
Example: `revisions.model` is `sha256:` + the hash of `model/config.json`, while
`model/model.safetensors` hashes to something else.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import MANIFEST
from auditor.protocols.a.facts.revisions import keeps_model_files, kept_revisions, revision_kinds
from auditor.protocols.a.view import RunView
from auditor.rule import rule


def _names(spec: dict) -> str:
    parts = (
        list(spec["files"])
        + (["every shard model-NNNNN-of-NNNNN.safetensors"] if spec.get("shards") else [])
        + list(spec.get("trained_files") or ())
    )
    return " or ".join(parts)


@rule(
    code="A0106",
    title="revisions are the hashes of their files",
    protocol_ref="A1.2",
    severity="error",
    requires=("manifest",),
    fix=(
        "Write each revision as sha256 of the file(s) its kind names (schemas/"
        "revision-kinds.json) and keep those files under model/."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    if not keeps_model_files(view):
        return
    rev = view.manifest["revisions"]
    kinds = revision_kinds()["kinds"]
    for kind, kept in kept_revisions(view).items():
        spec, declared, pointer = kinds[kind], rev.get(kind), f"/revisions/{kind}"
        if kept.problem is not None:
            yield RULE.finding(
                f"the {spec['what']} kept cannot pin revisions.{kind}: {kept.problem}",
                artifact=kept.files[0],
                observed=list(kept.files),
                expected=_names(spec),
            )
        elif not kept.files:
            if spec["required"]:
                yield RULE.finding(
                    f"the run keeps files under model/ but not {spec['what']} "
                    f"({_names(spec)}): revisions.{kind} pins no file the run keeps",
                    artifact=MANIFEST,
                    pointer=pointer,
                    observed=declared,
                    expected=_names(spec),
                )
            elif declared is not None:
                yield RULE.finding(
                    f"revisions.{kind} pins {spec['what']}, which the run does "
                    f"not keep ({_names(spec)})",
                    artifact=MANIFEST,
                    pointer=pointer,
                    observed=declared,
                    expected=f"model/{_names(spec)} kept",
                )
        elif declared is None:
            yield RULE.finding(
                f"the run keeps {', '.join(kept.files)} but pins no revisions.{kind}",
                artifact=MANIFEST,
                pointer=pointer,
                observed=None,
                expected=kept.revision,
            )
        elif declared != kept.revision:
            yield RULE.finding(
                f"revisions.{kind} is not the SHA-256 of {', '.join(kept.files)} ({spec['what']})",
                artifact=MANIFEST,
                pointer=pointer,
                observed=declared,
                expected=kept.revision,
                evidence={"files": list(kept.files)},
            )


RULE = check
