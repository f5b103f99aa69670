"""A1002: a configuration that is not accepted is never ranked with accepted ones.

What it checks: each typed ranking of `claims.json` (`rankings`) lists only variants the
auditor recomputes as accepted (every pass with its IDs exactly once, a valid format and the
quality rule met). A note that ranks a variant that is not accepted ("fastest", "best",
"recommended"...) gets a warning quoting the sentence, never an error. Whether a ranking's
order, members and figures are the recomputed ones is A1003's.
Reads: claims `/rankings` (`basis`, `variants`); the output files, references and expected
IDs (acceptance recomputed); CSV `variant_id`, `notes` and manifest `/notes` (the warning
only).
Why it matters: A10.2: a faster configuration that is not accepted does not meet the same
goal; ranking it against accepted ones compares speed on different work.
Example: `batch-32` fails the quality rule and `{"basis": {"measure": "elapsed_seconds",
"phase": "warm", "statistic": "median", "unit": "s", "order": "ascending"}, "variants":
["batch-32", "batch-8"], "values": [0.61, 1.04]}` ranks it first.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import CLAIMS
from auditor.protocols.a.facts.notes import note_matches, phrases
from auditor.protocols.a.facts.passes import variants_accepted
from auditor.protocols.a.facts.timing import basis_text
from auditor.protocols.a.subject import variant_subject
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A1002",
    title="no ranking of unaccepted configurations",
    protocol_ref="A10.2",
    severity="error",
    requires=("results", "outputs", "expected_ids", "manifest"),
    fix="Rank only accepted configurations; list the others apart.",
)
def check(view: RunView) -> Iterator[Finding]:
    accepted = variants_accepted(view)
    for n, ranking in enumerate((view.claims or {}).get("rankings") or []):
        for k, v in enumerate(ranking["variants"]):
            if v not in accepted:
                yield RULE.finding(
                    f"variant {v} is ranked ({basis_text(ranking['basis'])}) but is not accepted",
                    artifact=CLAIMS,
                    pointer=f"/rankings/{n}/variants/{k}",
                    observed=v,
                    expected=f"only accepted variants: {sorted(accepted)}",
                    subject=variant_subject(v),
                )
    rejected = sorted({v for v in view.results["variant_id"].unique()} - accepted)
    for artifact, loc, hit, variant, sentence in note_matches(view, phrases("ranking")):
        named = [v for v in rejected if v == variant or (variant is None and v in sentence)]
        if named:
            yield RULE.finding(
                f"a note may rank variant {named[0]}, which is not accepted "
                f"({hit!r}); notes are not judged: state rankings in "
                "claims.json",
                artifact=artifact,
                **loc,
                severity="warning",
                observed=sentence,
                expected="no ranking of a variant that is not accepted",
                subject=variant_subject(named[0]),
            )


RULE = check
