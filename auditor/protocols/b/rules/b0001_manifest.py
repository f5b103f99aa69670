"""B0001: manifest.json is present, valid JSON and valid against its schema.

What it checks: the run's declaration exists, parses strictly, and matches
`schemas/manifest-residency.schema.json`; each fault is reported with its JSON pointer and
cites the protocol rule the declaration serves (`/energy/minimums` is a B6 fault,
`/trial_order` a B3 one).
Reads: `manifest.json` (its bytes and every field its schema names).
Why it matters: the manifest is what was fixed before measuring (B1: artifact SHA-256, code
commit, compute policies; B2: the prompt sequence; B6: the energy window and its minimums)
and carries the SHA-256 of every file; without it no claim of the run can be checked.
Example: a manifest whose `model_tier` is "large" is reported at `/model_tier`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.view import RunView
from auditor.protocols.sealed import manifest_findings
from auditor.rule import rule


@rule(
    code="B0001",
    title="manifest present and valid",
    protocol_ref="B1",
    severity="error",
    fix="Re-run so the runner (or the harness) writes manifest.json; never patch it by hand.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from manifest_findings(RULE, view)


RULE = check
