"""B8 gates, before any energy is spent: accuracy against the verified references
(`corpus/references.jsonl`) and agreement with the accepted reference artifact's answers
(`reference/outputs.jsonl`: by default the workload's torch float32 answers on the CPU,
computed before the trials), each against its declared floor.

Each started policy classifies the fixed sequence once, batch one, outside the timed trials;
its answers are kept (`gates/<policy_id>.jsonl`) and the verdicts go to `gates/gates.json`.
The fractions are computed again from those files by the read-back stage, so what the run
claims is what the files show.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.errors import RunnerError


@dataclass(frozen=True)
class GateResult:
    policy_id: str
    answers: int
    accuracy: float
    agreement: float
    accuracy_floor: float
    agreement_floor: float

    @property
    def passed(self) -> bool:
        return self.accuracy >= self.accuracy_floor and self.agreement >= self.agreement_floor

    def failures(self) -> list[str]:
        out = []
        if self.accuracy < self.accuracy_floor:
            out.append(f"accuracy {self.accuracy:.4f} < floor {self.accuracy_floor}")
        if self.agreement < self.agreement_floor:
            out.append(f"agreement {self.agreement:.4f} < floor {self.agreement_floor}")
        return out

    def summary(self) -> str:
        return (
            f"accuracy {self.accuracy:.4f} (floor {self.accuracy_floor}), agreement "
            f"{self.agreement:.4f} (floor {self.agreement_floor})"
        )


def classify_sequence(
    classify_one: Callable[[str], str], ids: Sequence[str], texts: Sequence[str]
) -> list[dict[str, str]]:
    return [{"id": i, "label": classify_one(t)} for i, t in zip(ids, texts, strict=True)]


def read_reference_outputs(
    path: Path, ids: Sequence[str], classes: Sequence[str]
) -> list[dict[str, str]]:
    """A user's accepted reference answers: one {id, label} per prompt, in any order, each
    prompt exactly once, labels among the classes; returned in sequence order."""
    if not path.is_file():
        raise RunnerError(f"gates.reference_outputs {path}: not found")
    found: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            i, label = row["id"], row["label"]
        except (ValueError, KeyError, TypeError):
            raise RunnerError(
                f'gates.reference_outputs {path} line {n}: not an {{"id", "label"}} object'
            ) from None
        if i in found:
            raise RunnerError(f"gates.reference_outputs {path} line {n}: id {i!r} again")
        if label not in classes:
            raise RunnerError(
                f"gates.reference_outputs {path} line {n}: label {label!r} is "
                "not one of the corpus classes"
            )
        found[i] = label
    missing = [i for i in ids if i not in found]
    if missing or len(found) != len(ids):
        raise RunnerError(
            f"gates.reference_outputs {path}: {len(missing)} prompt(s) "
            f"without an answer (e.g. {missing[:3]}) or answers for IDs "
            "outside the sequence"
        )
    return [{"id": i, "label": found[i]} for i in ids]


def gates_record(
    results: Sequence[GateResult],
    not_evaluated: Mapping[str, str],
    accuracy_floor: float,
    agreement_floor: float,
    reference: dict[str, Any],
    artifacts: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The gates/gates.json document; ARTIFACTS: policy -> the SHA-256 of the artifact its
    gate pass ran (the one its trials run)."""
    shas = artifacts or {}
    rows: list[dict[str, Any]] = [
        {
            "policy_id": r.policy_id,
            "status": "evaluated",
            "outputs_file": f"gates/{r.policy_id}.jsonl",
            **({"artifact_sha256": shas[r.policy_id]} if r.policy_id in shas else {}),
            "answers": r.answers,
            "accuracy": r.accuracy,
            "agreement": r.agreement,
            "accuracy_passed": r.accuracy >= r.accuracy_floor,
            "agreement_passed": r.agreement >= r.agreement_floor,
            "passed": r.passed,
            "reason": None if r.passed else "; ".join(r.failures()),
        }
        for r in results
    ]
    rows += [
        {
            "policy_id": pid,
            "status": "not_evaluated",
            "outputs_file": None,
            "answers": None,
            "accuracy": None,
            "agreement": None,
            "accuracy_passed": None,
            "agreement_passed": None,
            "passed": False,
            "reason": reason,
        }
        for pid, reason in not_evaluated.items()
    ]
    return {
        "format": "gates/1",
        "accuracy_floor": accuracy_floor,
        "agreement_floor": agreement_floor,
        "reference": reference,
        "references_file": "corpus/references.jsonl",
        "reference_outputs_file": "reference/outputs.jsonl",
        "method": "each policy classifies the fixed sequence once, batch one, outside the "
        "timed trials; accuracy = answers equal to the reference label / "
        "answers; agreement = answers equal to the reference artifact's answer "
        "/ answers; passed = both at or above their floors",
        "policies": rows,
    }
