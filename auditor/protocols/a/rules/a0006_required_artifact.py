"""A0006: every artifact protocol A requires is in the run dir.

What it checks: the CSV, expected IDs, references, outputs, the train/tune split lists,
timeline, memory traces, placement evidence, environment, the archived set check, and (when
the manifest names them) the offers file and the evaluation inputs file exist.
Reads: the list of files of the run dir; manifest `/economics/offers_file`,
`/corpus/inputs_file`.
Why it matters: A1.4 and A10.1 require the expected list, every individual output, the quality
controls, the raw CSV and the economics to be kept together; without one the run cannot be
audited and the verdict is `incomplete`, not `accepted`.
Example: a run dir without `checks/set-check.json`: the set verification was not archived
(A2.6).
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import BY_KIND
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0006",
    title="required artifact absent",
    protocol_ref="A1.4",
    severity="error",
    fix="Re-run with the runner, which writes every required artifact.",
)
def check(view: RunView) -> Iterator[Finding]:
    for kind in sorted(view.absent - {"manifest"}):
        path = {"offers": view.offers_path, "inputs": view.inputs_path}.get(kind) or BY_KIND[
            kind
        ].path
        yield RULE.finding(
            f"no {kind} artifact ({path}): the run cannot be fully audited",
            artifact=path,
            missing_evidence=True,
            observed="absent",
            expected="present",
        )


RULE = check
