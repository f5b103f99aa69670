"""What protocol B gives `audit compare` (`ComparisonPart`): a policy runs on its runtime and
compute units (which name the accelerator it was placed on: an NPU is no GPU, and no CPU),
has no package cost, and is ranked apart by joules per inference recomputed from the power
evidence, then median trial wall time; the index keeps one energy figure per run, not one per
trial, so a choice is not told apart from its runner-up by its trials."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.protocols.base import ComparisonPart

CPU = "CPU"


def hardware(config: Mapping[str, Any]) -> str:
    figures = config.get("figures") or {}
    parts = [str(figures[k]) for k in ("runtime", "compute_units") if figures.get(k)]
    return " ".join(parts) or config.get("gpu_model") or CPU


COMPARISON = ComparisonPart(
    letter="B",
    hardware=hardware,
    rank_figure="joules_per_inference",
    figure_cell="per_inference",
    figure_heading="Per inference",
    hardware_words="a policy's runtime and compute units",
    unit="inferences/s",
    costed=False,
    passes_told_apart=False,
    row_figures={
        "joules_per_inference": "joules_per_inference",
        "average_power_w": "avg_power_w",
        "p95_ms": "p95_ms",
    },
    not_told_apart="per-trial energies are not in the index: not told apart here",
    ranked_title=(
        "Protocol B policies accepted (ranked apart: by joules per inference, then "
        "median trial wall time)"
    ),
    ranked_columns=(
        ("rank", "rank"),
        ("workload", "workload"),
        ("policy", "config_id"),
        ("runtime and units", "hardware"),
        ("runs accepting", "runs"),
        ("per inference", "energy"),
        ("average power", "power"),
        ("p95", "p95"),
        ("median trial", "median"),
        ("throughput", "throughput"),
    ),
)
