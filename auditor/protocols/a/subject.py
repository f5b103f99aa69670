"""What a protocol A finding is about, in protocol A's words: a variant, or one of its
passes (its phase and number); `variant_subject(...)` is the `Subject` its rules and view give."""

from __future__ import annotations

from auditor.model import Subject, SubjectWords

WORDS = SubjectWords(config="variant", run="pass", run_key="run")
"""`variant batch-4`, `batch-4 warm pass 2`; JSON `{"variant", "phase", "run"}`."""


def variant_subject(variant_id: str, phase: str | None = None, run: int | None = None) -> Subject:
    """The variant VARIANT_ID, or its pass (PHASE, RUN)."""
    return Subject(WORDS, variant_id, phase, run)
