"""B0204: each latency includes tokenization, as the manifest states in a typed field.

What it checks: the manifest states `timer_includes_tokenization` and it is true; a `false`
is an error (the timer leaves out part of the work), no statement is missing evidence. The
prose `timer_scope` is only quoted beside it: a scope that reads as excluding tokenization
while the typed field says it is included is a warning to look at (the raw check that the
latencies lie inside the window is B0303's).
Reads: manifest `/timer_includes_tokenization`, `/timer_scope`.
Why it matters: B2: "tokenization is included"; a latency that leaves it out makes a policy
look faster and cheaper than the app it deploys into.
Example: `timer_includes_tokenization: false`, `timer_scope` "model forward only".
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST
from auditor.protocols.b.view import RunView
from auditor.rule import rule

_NAMES = re.compile(r"\btokeni[sz](ation|ing|er)\b", re.IGNORECASE)
_EXCLUDED = re.compile(
    r"\b(without|excluding|excludes|excluded|not including|outside|except)"
    r"\b[^.;]{0,40}\btokeni[sz]",
    re.IGNORECASE,
)


@rule(
    code="B0204",
    title="tokenization inside the timed region",
    protocol_ref="B2",
    severity="error",
    requires=("manifest",),
    fix="Time each classification from the raw text (tokenization included), state it with "
    "`timer_includes_tokenization: true`, and say so in timer_scope.",
)
def check(view: RunView) -> Iterator[Finding]:
    stated = view.m.get("timer_includes_tokenization")
    scope = view.m.get("timer_scope")
    if stated is False:
        yield RULE.finding(
            "the manifest states that each latency leaves tokenization out",
            artifact=MANIFEST,
            pointer="/timer_includes_tokenization",
            observed=False,
            expected=True,
            evidence={"timer_scope": scope},
        )
    elif stated is None:
        yield RULE.finding(
            "the manifest does not state whether each latency includes "
            "tokenization (`timer_includes_tokenization`)",
            artifact=MANIFEST,
            pointer="/timer_includes_tokenization",
            observed=None,
            expected=True,
            missing_evidence=True,
            evidence={"timer_scope": scope},
        )
    elif isinstance(scope, str) and (not _NAMES.search(scope) or _EXCLUDED.search(scope)):
        yield RULE.finding(
            f"timer_scope does not read as including tokenization, though the "
            f'typed statement says it is: "{scope}"',
            artifact=MANIFEST,
            pointer="/timer_scope",
            severity="warning",
            observed=scope,
            expected="a scope that says tokenization is timed",
        )


RULE = check
