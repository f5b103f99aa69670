"""Where a protocol B finding points: a trial's row of trials.csv, a policy's row of
policies.csv (or its declaration in the manifest when the CSV has no row for it), and the
subject every finding about a trial or a policy carries (`policy_subject(, trial=)`), from
which the report and the run summary give each policy its verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.protocols.b.artifacts import MANIFEST, POLICIES, TRIALS
from auditor.protocols.b.facts.policies import PolicyFacts
from auditor.protocols.b.facts.trials import Trial
from auditor.protocols.b.subject import policy_subject


def at_trial(t: Trial) -> dict[str, Any]:
    return {"artifact": TRIALS, "row": t.row, "subject": policy_subject(t.policy_id, t.trial_index)}


def at_policy(f: PolicyFacts) -> dict[str, Any]:
    if f.row is not None:
        return {"artifact": POLICIES, "row": f.row, "subject": policy_subject(f.policy.policy_id)}
    return {
        "artifact": MANIFEST,
        "pointer": "/policies",
        "subject": policy_subject(f.policy.policy_id),
    }


def claim(row: Mapping[str, Any], texts: Mapping[str, Any], column: str) -> tuple[Any, str | None]:
    """A CSV cell: its typed value and its text as written."""
    text = texts.get(column)
    return row.get(column), text if isinstance(text, str) else None


def fmt(value: float | None, digits: int = 6) -> str:
    return "none" if value is None else f"{value:.{digits}g}"
