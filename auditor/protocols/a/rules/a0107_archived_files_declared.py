"""A0107: the archived ONNX model and tokenizer are the files the manifest declares.

What it checks: the files the manifest's `replay` section names are kept and hash (by the
auditor) to the SHA-256 it records for them (`replay.model.sha256`,
`replay.tokenizer.sha256`); the tokenizer it names is the one `revisions.tokenizer` pins;
and the model was exported from the weights `revisions.model` pins (`exported_from`).
Reads: manifest `/replay/model/file`, `/replay/model/sha256`, `/replay/model/exported_from`,
`/replay/tokenizer/file`, `/replay/tokenizer/sha256`, `/revisions`; the hashes of those files.
Why it matters: A1.2 and A1.4: the archived model is what `audit replay` re-runs to show the
answers came from it. A cut or swapped export whose declared hash no longer matches would
pass every other check and only fail at replay; check must refuse it first.
Example: `model/model.onnx` was replaced by a smaller export and re-sealed in `artifacts`,
but `replay.model.sha256` still names the original.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import MANIFEST
from auditor.protocols.a.facts.revisions import archived_model, kept_revisions
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0107",
    title="archived model files as declared",
    protocol_ref="A1.2",
    severity="error",
    requires=("manifest",),
    fix=(
        "Archive the exported model and tokenizer under the names and SHA-256 the replay "
        "section records, exported from the pinned weights; re-run if they changed."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    m = view.manifest
    rev = m["revisions"]
    onnx = archived_model(view)
    if onnx is not None:
        if onnx.actual is None:
            yield RULE.finding(
                f"the replay section names {onnx.file}, which the run does not keep",
                artifact=MANIFEST,
                pointer="/replay/model/file",
                observed=onnx.file,
                expected="a kept file",
            )
        elif onnx.actual != onnx.declared:
            yield RULE.finding(
                f"{onnx.file} does not hash to the SHA-256 the replay section "
                "records for it: the archived model is not the one exported",
                artifact=onnx.file,
                pointer="/replay/model/sha256",
                observed=onnx.actual,
                expected=onnx.declared,
            )
    replay = m.get("replay") if isinstance(m.get("replay"), dict) else {}
    model = replay.get("model") if isinstance(replay.get("model"), dict) else {}
    exported = model.get("exported_from")
    if isinstance(exported, str) and exported != rev["model"]:
        yield RULE.finding(
            "the replay model was exported from another model than revisions.model",
            artifact=MANIFEST,
            pointer="/replay/model/exported_from",
            observed=exported,
            expected=rev["model"],
        )
    tok = replay.get("tokenizer") if isinstance(replay.get("tokenizer"), dict) else {}
    tok_file = tok.get("file")
    actual = view.files_on_disk.get(tok_file) if isinstance(tok_file, str) else None
    if not actual:
        if isinstance(tok_file, str):
            yield RULE.finding(
                f"the replay section names {tok_file}, which the run does not keep",
                artifact=MANIFEST,
                pointer="/replay/tokenizer/file",
                observed=tok_file,
                expected="a kept file",
            )
        return
    if isinstance(tok.get("sha256"), str) and actual != tok["sha256"]:
        yield RULE.finding(
            f"{tok_file} does not hash to the SHA-256 the replay section records for it",
            artifact=tok_file,
            pointer="/replay/tokenizer/sha256",
            observed=f"sha256:{actual}",
            expected=f"sha256:{tok['sha256']}",
        )
    # the tokenizer the kinds name is A0106's; another file the section names is checked here
    if (
        tok_file not in kept_revisions(view)["tokenizer"].files
        and rev["tokenizer"] != f"sha256:{actual}"
    ):
        yield RULE.finding(
            f"revisions.tokenizer is not the SHA-256 of {tok_file}, the "
            "tokenizer the replay section names",
            artifact=MANIFEST,
            pointer="/revisions/tokenizer",
            observed=rev["tokenizer"],
            expected=f"sha256:{actual}",
            evidence={"tokenizer_file": tok_file},
        )


RULE = check
