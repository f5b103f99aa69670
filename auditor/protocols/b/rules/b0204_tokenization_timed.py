"""B0204: the timer's scope is declared, and it includes tokenization.

What it checks: the manifest's `timer_scope` is declared and says that each latency
includes tokenization (it names tokenization, and does not say it is excluded). The scope is
prose: this rule only warns, quoting it; the raw check that the latencies lie inside the
window is B0303's.
Reads: manifest `/timer_scope`.
Why it matters: B2: tokenization is part of the measured work; a latency that leaves it out
makes a policy look faster and cheaper than the app it deploys into.
Example: `timer_scope` "model forward only": tokenization is outside the timed region.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST
from auditor.protocols.b.view import RunView
from auditor.rule import rule

_NAMES = re.compile(r"\btokeni[sz](ation|ing|er)\b", re.IGNORECASE)
_EXCLUDED = re.compile(r"\b(without|excluding|excludes|excluded|not including|outside|except)"
                       r"\b[^.;]{0,40}\btokeni[sz]", re.IGNORECASE)


@rule(code="B0204", title="tokenization inside the timed region", protocol_ref="B2",
      severity="warning", requires=("manifest",),
      fix="Time each classification from the raw text (tokenization included) and say so in "
          "timer_scope.")
def check(view: RunView) -> Iterator[Finding]:
    scope = view.m.get("timer_scope")
    if not isinstance(scope, str) or not scope.strip():
        yield RULE.finding("the manifest declares no timer_scope: whether tokenization is "
                           "timed is not said", artifact=MANIFEST, pointer="/timer_scope",
                           observed=None, expected="a scope that includes tokenization")
    elif not _NAMES.search(scope) or _EXCLUDED.search(scope):
        yield RULE.finding(f"timer_scope does not say tokenization is timed: \"{scope}\"",
                           artifact=MANIFEST, pointer="/timer_scope", observed=scope,
                           expected="tokenization inside each latency")


RULE = check
