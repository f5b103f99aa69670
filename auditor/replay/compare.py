"""Agreement of one answers file with the replayed model, on the sampled IDs.

An ID agrees when every answer the file gives it (a protocol B trial repeats the sequence, so
an ID can have several) is the label the archived model gives it. A disagreement whose
replayed margin (the replayed label's score minus the answered label's) is at most
`TIE_MARGIN` is a tie: float32 rounding in another runtime or summation order can flip it, so
it counts as agreeing and is listed as a tie. Agreement is reported with its 95% Wilson
score interval.

The decision (docs/replay.md): against a floor of 1 (exact: float32 on the CPU) one
disagreement beyond a tie fails the file; against a lower floor the file meets it when the
sample's agreement reaches it, fails when even the interval's upper end is below it, and is
inconclusive in between (a larger `--sample` decides).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

TIE_MARGIN = 1e-4
"""Largest replayed score margin still counted as a tie (scores are float32 logits)."""
DEFAULT_FLOOR = 0.99
"""The floor of a file run in reduced precision or on a GPU when the protocol declares none."""
Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""
SHOWN_DISAGREEMENTS = 50
"""Disagreeing IDs listed per file (all are counted)."""

Status = Literal["met", "failed", "inconclusive", "not judged", "nothing to compare"]


def wilson(agreed: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of AGREED successes in N trials (N > 0)."""
    p = agreed / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Threshold:
    """The floor a file's agreement must reach, and why that one."""

    floor: float
    basis: str

    @property
    def exact(self) -> bool:
        return self.floor >= 1.0

    def describe(self) -> str:
        """`exact agreement (<basis>)` or `floor 0.99 (<basis>)`."""
        return (
            f"exact agreement ({self.basis})"
            if self.exact
            else f"floor {self.floor:g} ({self.basis})"
        )

    def to_json(self) -> dict[str, object]:
        return {"floor": self.floor, "exact": self.exact, "basis": self.basis}


@dataclass(frozen=True)
class Disagreement:
    """One sampled ID the file answers otherwise than the replayed model."""

    id: str
    answered: tuple[str, ...]
    """The file's labels for it that differ from the replayed one (distinct, in file order)."""
    replayed: str
    margin: float | None
    """Replayed label's score minus the best-scored answered label's; None when an answered
    label is not one of the model's labels."""
    tie: bool
    answers: int
    """How many of its answers in the file differ (a trial can answer an ID r times)."""

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "answered": list(self.answered),
            "replayed": self.replayed,
            "margin": self.margin,
            "tie": self.tie,
            "answers": self.answers,
        }


@dataclass(frozen=True)
class Agreement:
    """One answers file against the replayed model."""

    file: str
    kind: str
    """`pass` (protocol A), `trial`, `gate` or `reference` (protocol B)."""
    config: str | None
    """The variant or policy whose answers these are."""
    threshold: Threshold
    judged: bool
    note: str | None
    """Why a file is not judged (a candidate the run rejected itself), or other context."""
    compared: int
    """Sampled IDs the file answers."""
    agreed: int
    """Of those, the ones every answer of which is the replayed label (ties not included)."""
    missing: int
    """Sampled IDs the file does not answer (a failed pass stops early)."""
    answers: int
    """Answer lines compared."""
    disagreements: tuple[Disagreement, ...]
    """Every disagreeing ID, ties included, in input order."""

    @property
    def ties(self) -> int:
        return sum(d.tie for d in self.disagreements)

    @property
    def agreement(self) -> float | None:
        return (self.agreed + self.ties) / self.compared if self.compared else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.agreed + self.ties, self.compared) if self.compared else None

    @property
    def status(self) -> Status:
        if not self.compared:
            return "nothing to compare"
        if not self.judged:
            return "not judged"
        agreement, interval = self.agreement, self.interval
        assert agreement is not None and interval is not None
        if agreement >= self.threshold.floor:
            return "met"
        if self.threshold.exact or interval[1] < self.threshold.floor:
            return "failed"
        return "inconclusive"

    def to_json(self) -> dict[str, object]:
        interval = self.interval
        return {
            "file": self.file,
            "kind": self.kind,
            "config": self.config,
            "threshold": self.threshold.to_json(),
            "judged": self.judged,
            "note": self.note,
            "status": self.status,
            "compared": self.compared,
            "agreed": self.agreed,
            "ties": self.ties,
            "missing": self.missing,
            "answers": self.answers,
            "agreement": self.agreement,
            "ci95": list(interval) if interval else None,
            "disagreeing": len(self.disagreements),
            "disagreements": [d.to_json() for d in self.disagreements[:SHOWN_DISAGREEMENTS]],
        }


def compare(
    file: str,
    kind: str,
    config: str | None,
    threshold: Threshold,
    judged: bool,
    note: str | None,
    answered: Mapping[str, Sequence[str]],
    sample: Sequence[str],
    replayed: Mapping[str, str],
    scores: Mapping[str, Mapping[str, float]],
) -> Agreement:
    """The agreement of one file whose answers to the sampled IDs are ANSWERED (ID -> its
    labels, in file order) with the REPLAYED labels of the SAMPLE; SCORES gives each sampled
    ID's score per label, for the margins."""
    agreed = missing = answers = 0
    disagreements = []
    for i in sample:
        labels = answered.get(i)
        if not labels:
            missing += 1
            continue
        answers += len(labels)
        want = replayed[i]
        wrong = [label for label in labels if label != want]
        if not wrong:
            agreed += 1
            continue
        distinct = tuple(dict.fromkeys(wrong))
        own = scores[i]
        margin = (
            None
            if any(label not in own for label in distinct)
            else own[want] - max(own[label] for label in distinct)
        )
        disagreements.append(
            Disagreement(
                i, distinct, want, margin, margin is not None and margin <= TIE_MARGIN, len(wrong)
            )
        )
    return Agreement(
        file,
        kind,
        config,
        threshold,
        judged,
        note,
        len(sample) - missing,
        agreed,
        missing,
        answers,
        tuple(disagreements),
    )
