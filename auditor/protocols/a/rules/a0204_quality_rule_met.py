"""A0204: a pass claimed accepted satisfies the quality rule, recomputed from the raw files.

What it checks: the manifest's metric (macro-F1 by default; also accuracy, micro-F1,
weighted-F1) recomputed with polars from each output file and `corpus/references.jsonl`, held
against the threshold and against the reference value minus the tolerance
(`max_decrease`). A row with `corpus_accepted` true whose recomputed value fails is an error.
Conventions: see `auditor/protocols/a/facts/quality.py` (macro-F1 is the unweighted mean
over the declared classes present in references or predictions, zero_division=0; a missing
answer is wrong).
Reads: every output line's `id` and `label`; `corpus/references.jsonl`;
`corpus/expected_ids.txt`; manifest `/quality_rule`, `/task/classes`; CSV `corpus_accepted`.
Why it matters: A2.4: the quality rule fixed in advance decides acceptance, not the figure the
run wrote down.
Example: threshold 0.80, reference 0.86, tolerance 0.03: a recomputed macro-F1 of 0.81 fails
(0.81 < 0.83) although the row says `corpus_accepted` true.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.facts.passes import rows_with_stats
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0204",
    title="quality rule met",
    protocol_ref="A2.4",
    severity="error",
    requires=("outputs", "expected_ids", "references", "manifest", "results"),
    fix=(
        "The configuration does not meet the quality rule: fix the model or its settings and "
        "re-run; never lower the threshold afterwards."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    qr = view.manifest["quality_rule"]
    floor = qr["reference"]["value"] - qr["tolerance"]
    bad = rows_with_stats(view).filter(pl.col("corpus_accepted") & ~pl.col("quality_ok"))
    for r in bad.iter_rows(named=True):
        q = r["re_quality_value"]
        yield RULE.finding(
            f"claimed accepted but the recomputed {qr['metric']} "
            f"{'is not computable' if q is None else f'{q:.4f}'} fails the quality rule",
            artifact=RESULTS,
            row=r["row"],
            observed=q,
            expected=f">= {qr['threshold']} and >= {floor:.4f} "
            f"({qr['reference']['name']} {qr['reference']['value']} - {qr['tolerance']})",
            evidence={"output": r["file"]},
        )


RULE = check
