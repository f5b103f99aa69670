"""What a protocol B finding is about, in protocol B's words: a compute policy, or one of its
trials; `policy_subject(...)` is the `Subject` its rules give."""

from __future__ import annotations

from auditor.model import Subject, SubjectWords

WORDS = SubjectWords(config="policy", run="trial", run_key="trial")
"""`policy ort-cuda`, `ort-cuda trial 3`; JSON `{"policy", "trial"}`."""


def policy_subject(policy_id: str, trial: int | None = None) -> Subject:
    """The policy POLICY_ID, or its trial TRIAL."""
    return Subject(WORDS, policy_id, None, trial)
