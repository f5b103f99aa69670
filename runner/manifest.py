"""Pieces of `manifest.json` both protocols share: the header that says which protocol and
experiment a run dir holds, who wrote it and when, and the pinned revisions (A1.2, B1).
Each protocol adds its own sections, each built by a small typed piece of its own module."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import runner
from runner.config import shown_path
from runner.records import now_iso

RUNNER_NAME = "gpubench-audit runner"


@dataclass(frozen=True)
class Header:
    """What every manifest starts with."""

    protocol: str
    """`accepted-corpus-cost` (protocol A) or `residency-energy` (protocol B)."""
    experiment_id: str
    complete: bool
    """Every planned pass or trial has its row (failed ones included)."""
    declared_at: str
    config_source: str

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": "1",
            "protocol": self.protocol,
            "experiment_id": self.experiment_id,
            "status": "complete" if self.complete else "aborted",
            "declared_at": self.declared_at,
            "completed_at": now_iso(),
            "runner": {"name": RUNNER_NAME, "version": runner.__version__},
            "config_source": shown_path(self.config_source),
        }


@dataclass(frozen=True)
class Revisions:
    """A1.2: what the run used, pinned by hash (`sha256:` of the staged files)."""

    corpus: str
    model: str
    tokenizer: str
    code: str
    config: str | None = None
    """The model's `config.json`, when the workload stages one."""
    recipe: str | None = None
    """`recipe.json`, when the workload trained its weights during the run."""

    def to_json(self) -> dict[str, str]:
        out = {
            "corpus": self.corpus,
            "model": self.model,
            "tokenizer": self.tokenizer,
            "code": self.code,
        }
        out.update(
            {k: v for k, v in (("config", self.config), ("recipe", self.recipe)) if v is not None}
        )
        return out
