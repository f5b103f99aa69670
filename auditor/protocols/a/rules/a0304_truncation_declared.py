"""A0304: truncation is declared and consistent with the context limit.

What it checks: `manifest.corpus.truncation` names the context limit of the variants
(`context_tokens` equals each variant's `context`), counts no more truncated texts than
evaluation texts, and counts the evaluation texts of `corpus.eval_size` and of
`corpus/expected_ids.txt`.
Reads: manifest `/corpus/truncation`, `/corpus/eval_size`, `/variants/*/context`;
`corpus/expected_ids.txt`.
Why it matters: A3.3: shortening texts changes the work done; a comparison must say how much
of the corpus the context limit cut, for the limit actually applied.
Example: variants run with context 256 while the truncation record is for 512 tokens.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import EXPECTED, MANIFEST
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0304",
    title="truncation declared",
    protocol_ref="A3.3",
    severity="error",
    requires=("manifest", "expected_ids"),
    fix=(
        "Declare the truncation (how many texts the context limit cut) in the manifest and re-run."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    m = view.manifest
    tr = m["corpus"]["truncation"]
    where = "/corpus/truncation"
    for n, v in enumerate(m["variants"]):
        if v["context"] != tr["context_tokens"]:
            yield RULE.finding(
                f"variant {v['variant_id']} runs with another context limit "
                "than the one the truncation is declared for",
                artifact=MANIFEST,
                pointer=f"/variants/{n}/context",
                observed=v["context"],
                expected=tr["context_tokens"],
            )
    if tr["truncated_texts"] > tr["eval_texts"]:
        yield RULE.finding(
            "more truncated texts than evaluation texts",
            artifact=MANIFEST,
            pointer=f"{where}/truncated_texts",
            observed=tr["truncated_texts"],
            expected=f"<= {tr['eval_texts']}",
        )
    n_exp = view.expected_ids["id"].n_unique()
    for key, value in (("eval_texts", tr["eval_texts"]), ("eval_size", m["corpus"]["eval_size"])):
        if value != n_exp:
            loc = f"{where}/eval_texts" if key == "eval_texts" else "/corpus/eval_size"
            yield RULE.finding(
                f"{key} differs from the number of expected IDs",
                artifact=MANIFEST,
                pointer=loc,
                observed=value,
                expected=n_exp,
                evidence={"expected_file": EXPECTED},
            )


RULE = check
