"""What a protocol A run claims beyond its CSV, as typed fields (`claims.json`,
schemas/claims.schema.json): the summaries of its pass durations and the ranking of its
accepted variants. The auditor recomputes each from the raw files; free-text notes never
carry a claim a rule could judge.

Honest by construction: summaries are the median and the min-max range of the passes that
completed (five passes support no tail percentile, A6.3), one phase at a time (A5.2); the
ranking holds only variants every pass of which was accepted (A10.2); nothing is projected
over the package's days (A9.5), so `projections` stays empty.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

PassKey = tuple[str, str, int]


def summaries(entries: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Median, min and max of elapsed_seconds per variant and phase, over the timeline
    entries of passes that completed (`status` ok, a duration recorded)."""
    durations: dict[tuple[str, str], list[float]] = {}
    for e in entries:
        if (
            e["phase"] in ("cold", "warm")
            and e["status"] == "ok"
            and e.get("elapsed_seconds") is not None
        ):
            durations.setdefault((e["variant_id"], e["phase"]), []).append(e["elapsed_seconds"])
    out = []
    for (variant, phase), values in sorted(durations.items()):
        for name, value in (
            ("median", statistics.median(values)),
            ("min", min(values)),
            ("max", max(values)),
        ):
            out.append(
                {
                    "variant_id": variant,
                    "phase": phase,
                    "measure": "elapsed_seconds",
                    "statistic": name,
                    "value": value,
                    "unit": "s",
                    "passes": len(values),
                }
            )
    return out


def ranking(
    summary: list[dict[str, Any]], checks: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The accepted variants (every pass accepted) by median warm time, fastest first (equal
    medians by name), each with its median; no ranking at all when fewer than two variants
    qualify."""
    checks = list(checks)
    accepted = {
        v
        for v in {c["variant_id"] for c in checks}
        if all(c["corpus_accepted"] for c in checks if c["variant_id"] == v)
    }
    medians = {
        s["variant_id"]: s["value"]
        for s in summary
        if s["phase"] == "warm" and s["statistic"] == "median" and s["variant_id"] in accepted
    }
    if len(medians) < 2:
        return []
    order = sorted(medians, key=lambda v: (medians[v], v))
    return [{"basis": dict(BASIS), "variants": order, "values": [medians[v] for v in order]}]


BASIS = {
    "measure": "elapsed_seconds",
    "phase": "warm",
    "statistic": "median",
    "unit": "s",
    "order": "ascending",
}
"""What the ranking is by, as typed fields the auditor recomputes (claims schema version 2):
the median warm elapsed_seconds (the run's timer scope), smallest first."""


def claims(
    experiment_id: str, timeline: Iterable[Mapping[str, Any]], checks: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    summary = summaries(timeline)
    return {
        "schema_version": "2",
        "experiment_id": experiment_id,
        "summaries": summary,
        "rankings": ranking(summary, checks),
        "projections": [],
        "memory_figures": [],
    }
