"""The energy notes of protocol B's report: why energy was not measured, each distinct
reason said once and numbered, the tables referring to its number."""

from __future__ import annotations

from typing import Any


class EnergyNotes:
    """Why energy was not measured, each distinct reason said once and numbered: a run on a
    machine without a power source repeats one long reason for every trial and policy, and
    the tables refer to its number instead (`notes` is the list the page prints)."""

    def __init__(self) -> None:
        self.notes: list[dict[str, Any]] = []
        self._number: dict[str, int] = {}

    SHORT = 80
    """A reason this short is said where it applies; a longer one becomes a note."""

    def refer(self, reason: str) -> str:
        """`(energy note N)` for REASON, numbering it on first use."""
        n = self._number.get(reason)
        if n is None:
            n = self._number[reason] = len(self.notes) + 1
            self.notes.append({"n": n, "text": reason})
        return f"(energy note {n})"

    def abbreviate(self, text: str) -> str:
        """TEXT with each noted reason it quotes replaced by its number (a policy's reason
        quotes its first trial's), the rest a note of its own when still long."""
        for note in sorted(self.notes, key=lambda n: -len(n["text"])):
            text = text.replace(note["text"], f"energy note {note['n']}")
        return text if len(text) <= self.SHORT else self.refer(text)

    def abbreviate_all(self, text: str | None) -> str | None:
        """TEXT with each noted reason it quotes replaced by its number, nothing added."""
        for note in sorted(self.notes, key=lambda n: -len(n["text"])):
            text = text.replace(note["text"], f"energy note {note['n']}") if text else text
        return text
