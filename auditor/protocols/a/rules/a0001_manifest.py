"""A0001: manifest.json is present, valid JSON and valid against its schema.

What it checks: the run's declaration exists, parses, and matches
`schemas/manifest.schema.json` (read strictly: no repeated key, no NaN, `date-time` formats
checked); each fault is reported with its JSON pointer and cites the protocol rule the
declaration serves (`/revisions/model` empty is an A1.2 fault).
Reads: `manifest.json` (its bytes and every field its schema names).
Why it matters: the manifest is what was fixed before measuring (A1.1, A1.2, A5.1, A6.1) and
carries the SHA-256 of every file (A10.1); without it no claim of the run can be checked.
Example: a manifest whose `quality_rule.threshold` is the string "0.8" is reported at
`/quality_rule/threshold`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.view import RunView
from auditor.protocols.sealed import manifest_findings
from auditor.rule import rule


@rule(
    code="A0001",
    title="manifest present and valid",
    protocol_ref="A10.1",
    severity="error",
    fix="Re-run so the runner writes manifest.json; never write or patch it by hand.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from manifest_findings(RULE, view)


RULE = check
