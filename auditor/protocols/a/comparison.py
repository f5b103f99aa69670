"""What protocol A gives `audit compare` (`ComparisonPart`): a configuration runs on the GPU
model its placement evidence names (`CPU` for none), is costed per offer of that GPU, and is
ranked by cost per accepted corpus, then warm median; the index keeps each variant's warm
pass range, so a choice and its runner-up are told apart by their passes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.protocols.base import ComparisonPart

CPU = "CPU"
"""The hardware of a configuration whose run used no GPU."""


def hardware(config: Mapping[str, Any]) -> str:
    return config.get("gpu_model") or CPU


COMPARISON = ComparisonPart(
    letter="A",
    hardware=hardware,
    rank_figure="cost_per_accepted_corpus_minor",
    figure_cell="per_corpus",
    figure_heading="Per accepted corpus",
    hardware_words="the GPU model as the placement evidence names it (CPU for none)",
    unit="texts/s",
    costed=True,
    passes_told_apart=True,
    ranked_title=(
        "Ranked (accepted configurations only, A10.2), by cost per accepted "
        "corpus, then warm median"
    ),
    ranked_columns=(
        ("rank", "rank"),
        ("workload", "workload"),
        ("GPU", "hardware"),
        ("configuration", "config_id"),
        ("offer", "offer_id"),
        ("runs accepting", "runs"),
        ("warm median (passes)", "median_passes"),
        ("throughput", "throughput"),
        ("package", "package"),
        ("per accepted corpus", "per_corpus"),
    ),
)
