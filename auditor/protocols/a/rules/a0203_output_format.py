"""A0203: every output line is valid: it parses, has the required fields and a declared label.

What it checks: each line of each output file is a JSON object matching
`schemas/output-line.schema.json` (string `id` and `label`), and its label is one of the
manifest's `task.classes`; bad UTF-8 or a truncated line is reported with its line number. An
error when the row claims `format_valid` or `corpus_accepted`, a warning when it declares the
pass's output invalid.
Reads: every output line (its JSON, `id`, `label`); manifest `/task/classes`; CSV
`format_valid`, `corpus_accepted`.
Why it matters: A2.3: a corpus is accepted only when the output format is valid; a label
outside the classes cannot be scored and silently lowers or inflates the metric.
Example: line 318 of `outputs/batch-8/cold-1.jsonl` is `{"id": "ev-000318", "label":
"Positive"}` while the classes are lowercase.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.facts.claims import with_claims
from auditor.protocols.a.facts.passes import KEY, pass_stats
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0203",
    title="output lines valid",
    protocol_ref="A2.3",
    severity="error",
    requires=("outputs", "manifest"),
    fix=(
        "Make the classifier write one valid JSON line per ID with a declared label, then re-run."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    classes = list(view.classes)
    if "expected_ids" in view.available:  # the grouped pass already counted the bad lines
        stats = pass_stats(view)
        if not stats.select((pl.col("n_invalid") + pl.col("n_bad_label")).sum()).item():
            return
    o = view.outputs
    bad = o.filter(~pl.col("valid") | ~pl.col("label").is_in(classes).fill_null(False))
    if not bad.height:
        return
    first = (
        bad.sort("file", "line")
        .group_by("file", maintain_order=True)
        .agg(
            pl.len().alias("n"),
            pl.col("line").first(),
            pl.col("error").first(),
            pl.col("label").first(),
            pl.col("valid").first(),
            *[pl.col(k).first() for k in KEY],
        )
    )
    for s, claimed in with_claims(view, first, "format_valid", "corpus_accepted"):
        why = s["error"] if not s["valid"] else f"label {s['label']!r} is not a declared class"
        yield RULE.finding(
            f"{s['n']} invalid output line(s); the first: {why}"
            + ("" if claimed else " (declared by the row: not valid)"),
            artifact=s["file"],
            line=s["line"],
            severity="error" if claimed else "warning",
            observed=why,
            expected=f"JSON object with string id and a label among {classes}",
            evidence={"count": s["n"]},
        )


RULE = check
