"""The three B6 rules report the same shape of finding, each for its own reason a trace
cannot support a claimed energy figure (`Energy.status`)."""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.rules._energy import unsupported_policies, unsupported_trials
from auditor.protocols.b.rules._where import at_policy, at_trial
from auditor.protocols.b.view import RunView
from auditor.rule import Rule


def unsupported(rule: Rule, view: RunView, status: str, what: str) -> Iterator[Finding]:
    """RULE's findings for the trials and policies claiming energy over windows whose trace
    shows STATUS (WHAT says it in words)."""
    for t, cols in unsupported_trials(view, frozenset({status})):
        e = t.energy
        assert e is not None
        yield rule.finding(
            f"{t.name}: {', '.join(cols)} claimed, but {what}: {e.reason}",
            **at_trial(t),
            observed=e.reason,
            expected="empty energy cells, or a trace that supports them",
            evidence={"trace": e.trace},
        )
    for f, cols, bad in unsupported_policies(view, frozenset({status})):
        yield rule.finding(
            f"policy {f.policy.policy_id}: {', '.join(cols)} claimed, but for "
            f"{bad.name if bad else 'a trial'} {what}",
            **at_policy(f),
            observed=cols,
            expected="empty energy cells",
        )
