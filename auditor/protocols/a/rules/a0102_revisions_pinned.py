"""A0102: revisions and seed are pinned, the same wherever they appear.

What it checks: each row's `corpus_revision`, `model_revision`, `tokenizer_revision` and `seed`
equal the manifest's `revisions` and `seed`; `manifest.corpus.revision` equals
`revisions.corpus`; `environment.json`'s `code_version` equals `revisions.code`. Whether each
revision is the hash of the files its kind names is A0106's; the archived ONNX model and
tokenizer are A0107's.
Reads: CSV `corpus_revision`, `model_revision`, `tokenizer_revision`, `seed`; manifest
`/revisions`, `/seed`, `/corpus/revision`; environment `/code_version`.
Why it matters: A1.2 pins the corpus, model, tokenizer and code and announces the seed; a row
measured with another model revision is not the same experiment.
Example: row 4 says `model_revision` sha256:aaaa while the manifest pins sha256:bbbb.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import ENVIRONMENT, MANIFEST, RESULTS
from auditor.protocols.a.rules._cells import differing_cells
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0102",
    title="revisions and seed pinned",
    protocol_ref="A1.2",
    severity="error",
    requires=("manifest", "results"),
    fix=(
        "Pin every revision and the seed once, and use the same ones in every row; re-run the "
        "rows that differ."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    m = view.manifest
    rev = m["revisions"]
    want = {
        "corpus_revision": rev["corpus"],
        "model_revision": rev["model"],
        # a seed is an integer of any size: the CSV types it as canonical decimal text
        "tokenizer_revision": rev["tokenizer"],
        "seed": str(m["seed"]),
    }
    for col, value, bad in differing_cells(view.results, want):
        for row, got in bad.iter_rows():
            yield RULE.finding(
                f"{col} differs from the revision pinned in the manifest",
                artifact=RESULTS,
                row=row,
                observed=got,
                expected=value,
                evidence={"field": col},
            )
    if m["corpus"]["revision"] != rev["corpus"]:
        yield RULE.finding(
            "corpus.revision differs from revisions.corpus",
            artifact=MANIFEST,
            pointer="/corpus/revision",
            observed=m["corpus"]["revision"],
            expected=rev["corpus"],
        )
    env = view.environment
    if env is not None and env["code_version"] != rev["code"]:
        yield RULE.finding(
            "the code version observed differs from the one pinned",
            artifact=ENVIRONMENT,
            pointer="/code_version",
            observed=env["code_version"],
            expected=rev["code"],
        )


RULE = check
