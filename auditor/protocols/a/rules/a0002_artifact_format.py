"""A0002: every artifact of the run parses and matches its schema.

What it checks: JSON documents (environment, offers, set-check, memory traces, placement
evidence) against their schemas in `schemas/`, JSONL artifacts (references, timeline) line by
line, UTF-8 everywhere, and the file names of per-pass artifacts. JSON is read strictly (a
repeated key, also one written with `\\u` escapes, `NaN`, a number that is not finite or
beyond 64 bits, nesting deeper than the auditor's limit) and within size limits (a file too
large to parse or to hash, a directory that cannot be listed). Each fault names the file and
the line or JSON pointer. Output files are judged by A0203 instead (A2.3).
Reads: every artifact's bytes as its reader parses them (JSON documents, JSONL lines, ID
lists, file names).
Why it matters: a malformed artifact cannot back any claim (A1.4); the rules that need it are
skipped and the verdict cannot be `accepted`.
Example: a truncated last line in `timeline.jsonl` is reported as `timeline.jsonl:line 23`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0002",
    title="artifact malformed",
    protocol_ref="A1.4",
    severity="error",
    fix=(
        "Re-create the artifact with the tool that wrote it; a hand-repaired file is not evidence."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    yield from (f for f in view.load_findings if f.code == RULE.code)


RULE = check
