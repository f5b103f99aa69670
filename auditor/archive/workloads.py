"""The workloads of a comparison (`audit compare`): what the runs of a row measured, as the
index's identity columns say (each run's `RunIdentity`, re-derived from its files), labelled
`W1`, `W2`, ... Only runs of one workload share a row, a ranking or a choice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

UNKNOWN = "unknown:"
"""The group of a configuration whose run names no workload: its own, never shared."""


@dataclass(frozen=True)
class Workload:
    """What the runs of a row measured (their `RunIdentity`), shared by every run of it."""

    label: str
    """`W1`, `W2`, ... in the comparison's order (protocol, name, key)."""
    key: str | None
    """The index's `workload` key; None when the run names no workload (a row of its own)."""
    protocol: str
    name: str | None
    corpus: str | None
    model: str | None
    tokenizer: str | None
    config: str | None
    recipe: str | None
    """A model trained at run time: its recipe, which stands for its weights."""
    precision: str | None
    context: int | None
    runs: int
    """Runs counted with a configuration of this workload."""

    def describe(self) -> str:
        """`synthetic-classifier: model sha256:da0fe4781974, corpus sha256:95ec7a4268e6,
        tokenizer sha256:029c7132c5eb, float32, context 128`."""
        if self.key is None:
            return "the run names no model or corpus: compared with no other run"
        kinds = (
            (("recipe", self.recipe),)
            if self.recipe
            else (("model", self.model), ("tokenizer", self.tokenizer))
        )
        revs = [
            f"{k} {_short(v)}"
            for k, v in (*kinds, ("corpus", self.corpus), ("config", self.config))
            if v
        ]
        rest = [self.precision or "precision not recorded"]
        rest += [f"context {self.context}"] if self.context is not None else []
        return f"{self.name or 'unnamed'}: " + ", ".join(revs + rest)


def _short(rev: str) -> str:
    algo, _, hexa = rev.partition(":")
    return f"{algo}:{hexa[:12]}" if hexa else rev[:19]


def workloads(groups: dict[str, dict[str, Any]]) -> dict[str, Workload]:
    """Each workload group's `Workload` (GROUPS: group -> its first run and configuration
    and the sources of its runs), labelled in (protocol, name, key) order."""

    def order(item: tuple[str, dict[str, Any]]) -> tuple:
        work, w = item
        return (
            w["run"]["protocol"] or "",
            w["run"]["workload_name"] or "",
            work.startswith(UNKNOWN),
            work,
        )

    out = {}
    for n, (work, w) in enumerate(sorted(groups.items(), key=order), start=1):
        run, c = w["run"], w["config"]
        recipe = run["recipe"] if run["trained"] else None  # stands for what it trained
        out[work] = Workload(
            label=f"W{n}",
            key=None if work.startswith(UNKNOWN) else work,
            protocol=run["protocol"] or "unknown",
            name=run["workload_name"],
            corpus=run["corpus_revision"],
            model=None if recipe else run["model_revision"],
            tokenizer=None if recipe else run["tokenizer_revision"],
            config=run["config_revision"],
            recipe=recipe,
            precision=c["precision"],
            context=c["context"],
            runs=len(w["sources"]),
        )
    return out


def label_order(label: str) -> int:
    """`W12` -> 12: workloads sort by their number, not as text."""
    return int(label[1:]) if label[1:].isdigit() else 0
