"""The rows of a comparison (`audit compare`): the configurations of the counted runs grouped,
one `ConfigRow` each (the medians over its runs), ranked, and the `Choice` per workload,
hardware and offer. The hardware, the ranking figure and the figures a row carries are the
protocol's (`part`, its `ComparisonPart`); nothing here judges a run or computes a figure of
a run, it only groups, takes medians and ranks.

What is ranked (A10.2: only accepted configurations), within each protocol and workload:

- a configuration a run accepted is ranked with that run's median, its passes' range,
  throughput and, for each offer of the GPU the run measured (and only those), the package
  cost and the cost per accepted corpus in integer minor units; over several runs, the
  median of the runs' figures, the range over all their passes, and whether the runs agree;
- by the protocol's ranking figure (fewest first), then the median; ranks start at 1 in
  each protocol and workload;
- a configuration a run did not accept is listed apart with its reason (in a few words)
  and its detail (the deciding finding's code and message), never ranked, however fast.

What to buy (page 1): per workload, per hardware and offer, the best ranked configuration,
with how sure it is: whether its passes' range and the runner-up's are apart, and whether
the runs it rests on agree.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from auditor.archive.workloads import UNKNOWN, Workload, label_order
from auditor.errors import AuditorError
from auditor.present import natural_key
from auditor.protocols.base import ComparisonPart

ROW_FIGURES = ("joules_per_inference", "average_power_w", "p95_ms")
"""The `ConfigRow` fields a protocol may fill from its run summaries' figures."""
GENERIC = ComparisonPart(
    letter="?",
    hardware=lambda c: c.get("gpu_model") or "CPU",
    rank_figure="median_s",
    figure_cell="median",
    figure_heading="Median",
    hardware_words="the GPU model",
    unit="per s",
    costed=False,
    passes_told_apart=True,
    ranked_title="Ranked",
    ranked_columns=(("rank", "rank"), ("configuration", "config_id")),
)
"""The part of a protocol the auditor does not know (its runs have no configuration)."""


def part(protocol: str | None) -> ComparisonPart:
    """PROTOCOL's comparison part."""
    from auditor import protocols

    p = protocols.get(protocol) if protocol else None
    return p.comparison if p is not None and p.comparison is not None else GENERIC


@dataclass(frozen=True)
class ConfigRow:
    """One line of the comparison: a configuration (and offer, when ranked)."""

    rank: int | None
    """Within its protocol and workload: 1 = fewest of the protocol's ranking figure (A:
    cost per accepted corpus; B: joules per inference); None when not accepted."""
    status: str
    """The configuration's verdict in its runs: `accepted` (ranked), `rejected`,
    `incomplete`, or `baseline` (protocol B's CPU-only reference policy)."""
    protocol: str
    """The runs' protocol (`accepted-corpus-cost`, `residency-energy`)."""
    workload: str | None
    """The runs' workload key (the index's `workload`): every run of the row shares it."""
    workload_label: str
    """`W1`: the workload's label in this comparison (`Comparison.workloads`)."""
    hardware: str
    """What it ran on, as its protocol names it: the GPU model as evidenced (`CPU` for
    none), a protocol B policy's runtime and compute units."""
    config_id: str
    precision: str | None
    context: int | None
    offer_id: str | None
    """An offer of the GPU measured; None when no offer of that GPU was in the runs."""
    runs: int
    """Runs behind this line."""
    accepted_runs: int
    """Of the runs with this configuration (in any status), those that accepted it ..."""
    all_runs: int
    """... and all of them."""
    runs_agree: bool | None
    """Ranked, over two runs or more: every run with the configuration accepted it and the
    ranges of their passes overlap; None with one run, or when not ranked."""
    experiments: tuple[str, ...]
    sources: tuple[str, ...]
    """The runs it rests on (index sources)."""
    median_s: float | None
    """Median over the runs of their warm median (A) or median trial wall time (B)."""
    pass_min_s: float | None
    pass_max_s: float | None
    """The fastest and slowest warm pass (A) or ok trial (B) of all those runs."""
    throughput_per_s: float | None
    currency: str | None
    package_total_minor: int | None
    cost_per_accepted_corpus_minor: int | None
    """Money: integer minor units of `currency`; medians over runs are one run's value."""
    joules_per_inference: float | None
    average_power_w: float | None
    p95_ms: float | None
    """Medians over the runs of the figures the protocol's summary names
    (`ComparisonPart.row_figures`: protocol B's energy, power and p95); None otherwise."""
    reason: str | None
    """Not accepted: why, in a few words; accepted without a cost: why there is none."""
    detail: str | None
    """Not accepted: the deciding finding's code and message (the configuration's own, else
    the run's, said so)."""


@dataclass(frozen=True)
class Choice:
    """What to buy for one workload on one hardware and offer: the best ranked
    configuration there."""

    best: ConfigRow
    runner_up: ConfigRow | None
    """The next ranked configuration of the same workload, hardware and offer."""
    told_apart: bool | None
    """The best's passes and the runner-up's do not overlap (their ranges are apart), so
    the order of the two is measured, not noise; None without a runner-up, and where the
    protocol's index figures cannot tell (`ComparisonPart.passes_told_apart`)."""


def _median(values: list[Any]) -> Any:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _median_int(values: list[Any]) -> int | None:
    """Money: the median run's amount (low median), so it stays an integer."""
    vals = [v for v in values if v is not None]
    return statistics.median_low(vals) if vals else None


def _finite(v: Any) -> float | None:
    ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    return float(v) if ok else None


# -- grouping and ranking --------------------------------------------------------------

Key = tuple[str, str, str, str, str | None]
"""A configuration: (protocol, workload group, hardware, variant or policy, precision)."""


@dataclass
class Groups:
    """The configurations of the runs, grouped: ranked ones per offer, others per status;
    and each workload group's runs."""

    ranked: dict[tuple, list[dict]]
    other: dict[tuple, list[dict]]
    seen: dict[Key, int]
    accepted: dict[Key, int]
    workloads: dict[str, dict[str, Any]]


def group(runs: list[dict[str, Any]]) -> Groups:
    """The configurations of RUNS (index rows with their `configurations`), grouped."""
    g = Groups({}, {}, {}, {}, {})
    for run in runs:
        for c in run["configurations"] or []:
            c = {
                **c,
                "source": run["source"],
                "protocol": run["protocol"],
                "experiment_id": run["experiment_id"],
                "run_verdict": run["verdict"],
                "run_reason": run["reason"],
                "figures": json.loads(c["figures_json"]) if c["figures_json"] else {},
            }
            p = part(c["protocol"])
            work = c["workload"] or f"{UNKNOWN}{run['source']}"
            w = g.workloads.setdefault(work, {"run": run, "config": c, "sources": set()})
            w["sources"].add(run["source"])
            key = (c["protocol"] or "unknown", work, p.hardware(c), c["config_id"], c["precision"])
            g.seen[key] = g.seen.get(key, 0) + 1
            g.accepted[key] = g.accepted.get(key, 0) + bool(c["accepted"])
            if not c["accepted"]:
                g.other.setdefault((*key, c["verdict"] or "rejected"), []).append(c)
                continue
            # Only offers of the GPU the run measured: its accepted count says nothing else.
            here = [o for o in c["costs"] or [] if o["measured_here"]]
            if not here:
                why = f"no offer of {key[2]} among the run's offers" if p.costed else None
                here = [
                    {
                        "offer_id": None,
                        "currency": None,
                        "package_total_minor": None,
                        "cost_per_accepted_corpus_minor": None,
                        "why_not": why,
                    }
                ]
            for o in here:
                g.ranked.setdefault((*key, o["offer_id"]), []).append({**c, "offer": o})
    return g


def _overlap(items: list[dict[str, Any]]) -> bool | None:
    """Whether the pass ranges of ITEMS (one per run) share a common interval."""
    spans = [
        (i["min_s"], i["max_s"]) for i in items if i["min_s"] is not None and i["max_s"] is not None
    ]
    if len(spans) < len(items) or not spans:
        return None
    return max(lo for lo, _ in spans) <= min(hi for _, hi in spans)


def row(
    g: Groups,
    works: dict[str, Workload],
    key: tuple,
    items: list[dict],
    status: str,
    offer_id: str | None,
) -> ConfigRow:
    """One line of the comparison: the median over its runs of their figures."""
    items = sorted(items, key=lambda i: i["source"])
    ranked = status == "accepted"
    offers = [i.get("offer") or {} for i in items]
    wanted = part(key[0]).row_figures
    figures = {
        name: _median([_finite(i["figures"].get(wanted[name])) for i in items])
        if name in wanted
        else None
        for name in ROW_FIGURES
    }
    seen, accepted = g.seen[key[:5]], g.accepted[key[:5]]
    agree = None
    if ranked and seen >= 2:
        overlap = _overlap(items)
        agree = accepted == seen and overlap is True
    if ranked:
        reason = next((o.get("why_not") for o in offers if o.get("why_not")), None)
        detail = None
    else:
        first = items[0]
        reason = first["reason"]
        detail = first["detail"]  # its own finding, or its run's said to be the run's
    currencies = sorted({o["currency"] for o in offers if o.get("currency")})
    if len(currencies) > 1:
        raise AuditorError(
            f"{key[3]} on {offer_id}: costs in several currencies "
            f"({', '.join(currencies)}) cannot be one median"
        )
    work = works[key[1]]
    return ConfigRow(
        rank=None,
        status=status,
        protocol=key[0],
        workload=work.key,
        workload_label=work.label,
        hardware=key[2],
        config_id=key[3],
        precision=key[4],
        context=work.context,
        offer_id=offer_id,
        runs=len(items),
        accepted_runs=accepted,
        all_runs=seen,
        runs_agree=agree,
        experiments=tuple(sorted({i["experiment_id"] for i in items if i["experiment_id"]})),
        sources=tuple(i["source"] for i in items),
        median_s=_median([i["median_s"] for i in items]),
        pass_min_s=min((i["min_s"] for i in items if i["min_s"] is not None), default=None),
        pass_max_s=max((i["max_s"] for i in items if i["max_s"] is not None), default=None),
        throughput_per_s=_median([i["throughput_per_s"] for i in items]),
        currency=currencies[0] if currencies else None,
        package_total_minor=_median_int([o.get("package_total_minor") for o in offers]),
        cost_per_accepted_corpus_minor=_median_int(
            [o.get("cost_per_accepted_corpus_minor") for o in offers]
        ),
        **figures,
        reason=reason,
        detail=detail,
    )


def rank_key(r: ConfigRow) -> tuple:
    """Within a protocol and workload: the protocol's ranking figure, fewest first, then
    the median; a missing figure last."""
    first = getattr(r, part(r.protocol).rank_figure)
    return (
        r.protocol,
        label_order(r.workload_label),
        first is None,
        first or 0,
        r.median_s is None,
        r.median_s or 0.0,
        r.hardware,
        natural_key(r.config_id),
        r.precision or "",
        r.offer_id or "",
    )


def numbered(ranked: list[ConfigRow]) -> Iterator[ConfigRow]:
    """RANKED (sorted by `rank_key`) numbered from 1 within each protocol and workload."""
    n, group = 0, None
    for r in ranked:
        n = n + 1 if (r.protocol, r.workload_label) == group else 1
        group = (r.protocol, r.workload_label)
        yield replace(r, rank=n)


def choices(ranked: tuple[ConfigRow, ...]) -> tuple[Choice, ...]:
    """The best ranked configuration per workload, hardware and offer, the cheapest first
    within each workload."""
    groups: dict[tuple, list[ConfigRow]] = {}
    for r in ranked:  # already in rank order
        groups.setdefault((r.protocol, r.workload_label, r.hardware, r.offer_id), []).append(r)
    out = []
    for rows in groups.values():
        best = rows[0]
        up = rows[1] if len(rows) > 1 else None
        apart = None
        if up is not None and part(best.protocol).passes_told_apart:
            lo, hi = best.pass_min_s, best.pass_max_s
            up_lo, up_hi = up.pass_min_s, up.pass_max_s
            if lo is not None and hi is not None and up_lo is not None and up_hi is not None:
                apart = hi < up_lo or up_hi < lo
        out.append(Choice(best, up, apart))
    return tuple(sorted(out, key=lambda c: rank_key(c.best)))
