"""A0102: revisions and seed are pinned, the same wherever they appear, and the model files
are the ones pinned.

What it checks: each row's `corpus_revision`, `model_revision`, `tokenizer_revision` and `seed`
equal the manifest's `revisions` and `seed`; `manifest.corpus.revision` equals
`revisions.corpus`; `environment.json`'s `code_version` equals `revisions.code`; and when the
run keeps its weights and tokenizer under `model/`, the model and tokenizer revisions are each
`sha256:<hex>` of one of those files (hashed by the auditor, not declared).
Reads: CSV `corpus_revision`, `model_revision`, `tokenizer_revision`, `seed`; manifest
`/revisions`, `/seed`, `/corpus/revision`, `/replay/tokenizer/file`,
`/replay/tokenizer/sha256`, `/replay/model/exported_from`; environment `/code_version`; the
bytes of the files under `model/`.
Why it matters: A1.2 pins the corpus, model, tokenizer and code and announces the seed; a row
measured with another model revision is not the same experiment, and a revision that is not the
hash of the weights kept pins nothing.
Example: row 4 says `model_revision` sha256:aaaa while the manifest pins sha256:bbbb; or
`model/weights.pt` was replaced and no longer hashes to `revisions.model`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import ENVIRONMENT, MANIFEST, MODEL, RESULTS
from auditor.protocols.a.facts.gpus import model_files
from auditor.protocols.a.rules._cells import differing_cells
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(code="A0102", title="revisions and seed pinned", protocol_ref="A1.2", severity="error",
      requires=("manifest", "results"),
      fix=("Pin every revision and the seed once, and use the same ones in every row; re-run the "
           "rows that differ."))
def check(view: RunView) -> Iterator[Finding]:
    m = view.manifest
    rev = m["revisions"]
    want = {"corpus_revision": rev["corpus"], "model_revision": rev["model"],
            # a seed is an integer of any size: the CSV types it as canonical decimal text
            "tokenizer_revision": rev["tokenizer"], "seed": str(m["seed"])}
    for col, value, bad in differing_cells(view.results, want):
        for row, got in bad.iter_rows():
            yield RULE.finding(f"{col} differs from the revision pinned in the manifest",
                               artifact=RESULTS, row=row, observed=got,
                               expected=value, evidence={"field": col})
    if m["corpus"]["revision"] != rev["corpus"]:
        yield RULE.finding("corpus.revision differs from revisions.corpus", artifact=MANIFEST,
                           pointer="/corpus/revision", observed=m["corpus"]["revision"],
                           expected=rev["corpus"])
    env = view.environment
    if env is not None and env["code_version"] != rev["code"]:
        yield RULE.finding("the code version observed differs from the one pinned",
                           artifact=ENVIRONMENT, pointer="/code_version",
                           observed=env["code_version"], expected=rev["code"])
    kept = model_files(view)
    if kept:
        hashes = {f"sha256:{h}": p for p, h in kept.items()}
        for what in ("model", "tokenizer"):
            if rev[what] not in hashes:
                yield RULE.finding(
                    f"revisions.{what} is not the SHA-256 of any file under {MODEL}: the "
                    f"{what} kept is not the one pinned", artifact=MANIFEST,
                    pointer=f"/revisions/{what}", observed=rev[what],
                    expected={p: f"sha256:{h}" for p, h in sorted(kept.items())[:10]})
    # The replay section names which kept file is the tokenizer: it is the one pinned.
    replay = m.get("replay") if isinstance(m.get("replay"), dict) else {}
    tok = replay.get("tokenizer") if isinstance(replay.get("tokenizer"), dict) else {}
    tok_file = tok.get("file")
    if isinstance(tok_file, str) and tok_file in kept:
        actual = f"sha256:{kept[tok_file]}"
        if rev["tokenizer"] != actual:
            yield RULE.finding(f"revisions.tokenizer is not the SHA-256 of {tok_file}, the "
                               "tokenizer the replay section names", artifact=MANIFEST,
                               pointer="/revisions/tokenizer", observed=rev["tokenizer"],
                               expected=actual, evidence={"tokenizer_file": tok_file})
        if isinstance(tok.get("sha256"), str) and f"sha256:{tok['sha256']}" != actual:
            yield RULE.finding(f"{tok_file} does not hash to the SHA-256 the replay section "
                               "records for it", artifact=tok_file,
                               observed=actual, expected=f"sha256:{tok['sha256']}",
                               pointer="/replay/tokenizer/sha256")
    model = replay.get("model") if isinstance(replay.get("model"), dict) else {}
    exported = model.get("exported_from")
    if isinstance(exported, str) and exported != rev["model"]:
        yield RULE.finding("the replay model was exported from another model than "
                           "revisions.model", artifact=MANIFEST,
                           pointer="/replay/model/exported_from", observed=exported,
                           expected=rev["model"])


RULE = check
