"""What the run claims, computed from the files it wrote (read back from disk), never from
what the trial loop believes: per trial the inferences, p95 latency and energy
(`trials.csv`), per policy the medians, p95 over every inference, energy per inference,
accuracy, agreement, operation share and the verdict (`policies.csv`).

Conventions, documented in docs/run-dir-residency.md so the auditor can recompute them:
p95 is the nearest rank (the ceil(0.95 n)-th smallest value); the median of an even count is
the mean of the two middle values; a policy's average power and joules per inference pool
its ok trials (sum of energy over sum of seconds or of inferences), and only when every ok
trial has a measured energy.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.b.energy.window import Analysis


def nearest_rank(values: Sequence[float], q: float = 0.95) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


@dataclass(frozen=True)
class TrialOutputs:
    """One trial's outputs file as read back."""

    ids: list[str]
    labels: list[str]
    latencies_ms: list[float]

    @classmethod
    def read(cls, path: Path) -> TrialOutputs:
        ids, labels, lat = [], [], []
        with open(path, encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                ids.append(row["id"])
                labels.append(row["label"])
                lat.append(float(row["latency_ms"]))
        return cls(ids, labels, lat)

    def follows(self, sequence: Sequence[str], repetitions: int) -> bool:
        """The answers are the sequence, repeated in the same order, complete."""
        return self.ids == list(sequence) * repetitions

    def answers(self) -> list[tuple[str, str]]:
        return list(zip(self.ids, self.labels, strict=True))


def read_answers(path: Path) -> list[tuple[str, str]]:
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            out.append((row["id"], row["label"]))
    return out


@dataclass(frozen=True)
class TrialFigures:
    """One trial's claims, from its outputs and power trace."""

    inferences: int
    p95_ms: float | None
    wall_seconds: float | None
    energy: Analysis | None

    @property
    def measured(self) -> bool:
        return self.energy is not None and self.energy.status == "measured"

    @property
    def joules_per_inference(self) -> float | None:
        if not self.measured or not self.inferences or self.energy is None:
            return None
        return (self.energy.energy_j or 0.0) / self.inferences


@dataclass(frozen=True)
class PolicyFigures:
    trials: int
    median_wall_seconds: float | None
    p95_ms: float | None
    average_power_w: float | None
    joules_per_inference: float | None
    energy_note: str
    energy_source: str | None = None
    """The instrument(s) of every ok trial's energy; B7 compares only like with like."""


def pool(ok: Sequence[TrialFigures], latencies: Sequence[float]) -> PolicyFigures:
    """A policy's figures over its ok trials."""
    walls = [t.wall_seconds for t in ok if t.wall_seconds is not None]
    figures: dict[str, Any] = {"average_power_w": None, "joules_per_inference": None}
    sources = {t.energy.energy_source for t in ok if t.energy}
    if not ok:
        note = "no ok trial"
    elif all(t.measured for t in ok) and len(sources) == 1:
        energy = sum((t.energy.energy_j or 0.0) for t in ok if t.energy)
        seconds = sum(walls)
        figures = {
            "average_power_w": energy / seconds if seconds else None,
            "joules_per_inference": energy / sum(t.inferences for t in ok),
            "energy_source": sources.pop(),
        }
        note = f"energy pooled over {len(ok)} ok trials ({figures['energy_source']})"
    elif all(t.measured for t in ok):
        note = f"energy not pooled: the ok trials were measured by {sorted(map(str, sources))}"
    else:
        states = sorted(
            {t.energy.status if t.energy else "not_measured" for t in ok} - {"measured"}
        )
        note = f"energy not pooled: trial energy {', '.join(states)} (see trials.csv notes)"
    return PolicyFigures(
        len(ok), median(walls), nearest_rank(latencies), **figures, energy_note=note
    )


def accuracy_agreement(
    answers: Sequence[tuple[str, str]],
    references: Mapping[str, str],
    reference_outputs: Mapping[str, str],
) -> tuple[float | None, float | None]:
    if not answers:
        return None, None
    right = sum(1 for i, label in answers if references.get(i) == label)
    agree = sum(1 for i, label in answers if reference_outputs.get(i) == label)
    return right / len(answers), agree / len(answers)
