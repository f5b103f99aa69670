"""B0202: the fixed prompt sequence is the one declared: its hash, its length, unique IDs.

What it checks: the SHA-256 of prompts/sequence.jsonl (recomputed from its bytes) equals the
manifest's `prompt_sequence.sha256`; the file holds `prompt_sequence.prompts` prompts with
no ID twice; the protocol's sequence is 1,000 prompts (another length is a warning: the
figures are per inference, but they are not the protocol's).
Reads: prompts/sequence.jsonl (bytes and IDs); manifest `/prompt_sequence/sha256`,
`/prompt_sequence/prompts`.
Why it matters: B2 and B10: every policy classifies the same fixed sequence; the declared
hash is what every trial's row refers to, and a duplicated ID makes one prompt count twice.
Example: the manifest declares ca2b... and the file hashes to 77f0...: it was changed after
the declaration.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST, PROMPTS
from auditor.protocols.b.facts.declared import PROTOCOL_PROMPTS
from auditor.protocols.b.facts.sequence import sequence
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0202",
    title="prompt sequence as declared",
    protocol_ref="B2",
    severity="error",
    requires=("manifest", "prompts"),
    fix="Keep prompts/sequence.jsonl exactly as declared; declare its SHA-256 and length.",
)
def check(view: RunView) -> Iterator[Finding]:
    seq = sequence(view)
    declared = view.m["prompt_sequence"]
    if seq.sha256 != declared["sha256"]:
        yield RULE.finding(
            "prompts/sequence.jsonl does not hash to the declared SHA-256",
            artifact=MANIFEST,
            pointer="/prompt_sequence/sha256",
            observed=seq.sha256,
            expected=declared["sha256"],
        )
    if seq.n != declared["prompts"]:
        yield RULE.finding(
            f"the sequence holds {seq.n} prompts, {declared['prompts']} declared",
            artifact=PROMPTS,
            observed=seq.n,
            expected=declared["prompts"],
        )
    if seq.duplicates:
        yield RULE.finding(
            f"{len(seq.duplicates)} prompt ID(s) listed twice",
            artifact=PROMPTS,
            observed=list(seq.duplicates[:20]),
            expected="unique IDs",
        )
    if seq.n != PROTOCOL_PROMPTS:
        yield RULE.finding(
            f"the sequence holds {seq.n} prompts; the protocol's is {PROTOCOL_PROMPTS}",
            artifact=PROMPTS,
            observed=seq.n,
            expected=PROTOCOL_PROMPTS,
        )


RULE = check
