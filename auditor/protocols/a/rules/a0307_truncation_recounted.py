"""A0307: the number of truncated texts is the one the archived tokenizer gives.

What it checks: `manifest.corpus.truncation.truncated_texts` equals the number of evaluation
texts (`corpus/eval-inputs.jsonl`) longer than `context_tokens`, recounted by the auditor
with the tokenizer the run archives as data (the replay section's file and kind:
`bow-words-pairs/1` counts words, `hf-tokenizers/1` tokens with the special tokens). A
tokenizer that does not load or apply is a warning: the count could not be checked. A run
that archives no tokenizer of a kind the auditor implements, or keeps no evaluation inputs
(both optional), is not recounted: its count is only checked against the evaluation texts
(A0304).
Reads: manifest `/corpus/truncation`, `/replay/tokenizer`; the tokenizer file; the
evaluation inputs.
Why it matters: A3.3: truncation is described because cutting texts changes the work done,
and A2.5: a count is a claim like any other. "0 truncated" while the tokenizer cuts 23 texts
hides that the variants classified shortened texts.
Example: the manifest declares `"truncated_texts": 0` with `"context_tokens": 64`, and 3 of
the 1,000 inputs hold more than 64 words.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import MANIFEST
from auditor.protocols.a.facts.revisions import truncation
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0307",
    title="truncation count recomputed",
    protocol_ref="A3.3",
    severity="error",
    requires=("manifest",),
    fix=(
        "Declare the number of evaluation texts the archived tokenizer cuts at the context "
        "limit (count them with that tokenizer), or archive the tokenizer that ran."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    t = truncation(view)
    if t is None:
        return
    pointer = "/corpus/truncation/truncated_texts"
    declared = view.manifest["corpus"]["truncation"]["truncated_texts"]
    if t.counted is None:
        yield RULE.finding(
            f"the truncated texts could not be recounted: {t.tokenizer} "
            f"({t.kind}) does not apply ({t.problem})",
            artifact=MANIFEST,
            pointer=pointer,
            severity="warning",
            observed=declared,
            expected=f"a count by {t.tokenizer}",
        )
    elif t.counted != declared:
        yield RULE.finding(
            f"{declared} truncated text(s) declared; {t.tokenizer} ({t.kind}) "
            f"cuts {t.counted} of the {t.texts} evaluation texts at "
            f"{t.context} tokens",
            artifact=MANIFEST,
            pointer=pointer,
            observed=declared,
            expected=t.counted,
            evidence={"tokenizer": t.tokenizer, "kind": t.kind, "context_tokens": t.context},
        )


RULE = check
