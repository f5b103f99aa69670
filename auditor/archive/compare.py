"""`audit compare DIR`: what to buy, from an archive's index, and its signed report.

A configuration is (protocol, workload, hardware, variant or policy, precision), costed per
offer where its protocol costs one. The workload is what the run measured, as its files show
it (`RunIdentity`: the corpus, model, tokenizer and config revisions, with the precision and
context; the index's `workload` key): only runs of the same workload share a row, and
rankings and choices never cross workloads. The hardware, the ranking figure and how a row is
shown are the protocol's (`Protocol.comparison`, a `ComparisonPart`): nothing here knows a
protocol. Every figure comes from the index, which holds only what the auditor recomputed
from each run's raw files; nothing here judges a run or computes a figure of a run (those are
the protocols' summaries), it only groups, takes medians and ranks.

Which rows are runs (`auditor.archive.copies`): copies of one run count once, a conflict
(rows sharing a manifest but not their bytes) counts the version that matches its manifest;
every row is in exactly one of: runs (with or without a configuration to compare), copies,
set aside, or not audited (`Comparison.headline` says how many of each).

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
the runs it rests on agree. The signed report of a comparison is
`auditor.archive.compare_report`.
"""

from __future__ import annotations

import json
import math
import posixpath
import statistics
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from auditor.archive import index
from auditor.archive.copies import Conflict, identify
from auditor.archive.workloads import UNKNOWN, Workload, label_order, workloads
from auditor.dirkind import wrong_kind
from auditor.errors import AuditorError
from auditor.present import natural_key
from auditor.protocols.base import ComparisonPart

TEMPLATE = "comparison.html.j2"
SCHEMA_VERSION = "4"
AUDITED = ("accepted", "rejected", "incomplete")
"""Index verdicts of a run the auditor could judge."""
CSV_COLUMNS = (
    "rank",
    "status",
    "protocol",
    "workload",
    "workload_label",
    "hardware",
    "config_id",
    "precision",
    "context",
    "offer_id",
    "runs",
    "accepted_runs",
    "all_runs",
    "runs_agree",
    "experiments",
    "sources",
    "median_s",
    "pass_min_s",
    "pass_max_s",
    "throughput_per_s",
    "currency",
    "package_total_minor",
    "cost_per_accepted_corpus_minor",
    "joules_per_inference",
    "average_power_w",
    "p95_ms",
    "reason",
    "detail",
)
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


@dataclass(frozen=True)
class Comparison:
    index_sha256: str
    index_rows: int
    runs: int
    """Distinct runs counted: audited, copies once, conflicts resolved."""
    compared: int
    """Of those, runs with a configuration to compare."""
    copies: tuple[tuple[str, str], ...]
    """(source, the source it is a byte-identical copy of), left out."""
    conflicts: tuple[Conflict, ...]
    not_audited: int
    """Rows of sources or runs the auditor could not judge (refused, unreadable, lost)."""
    verdicts: tuple[tuple[str, int], ...]
    """Rows of the index per verdict (copies included)."""
    choices: tuple[Choice, ...]
    ranked: tuple[ConfigRow, ...]
    not_accepted: tuple[ConfigRow, ...]
    other_runs: tuple[tuple[str, str], ...]
    """(source, why) of what has no configuration to compare: sources and runs that could
    not be audited, and runs rejected before any configuration could be read."""
    set_aside: int
    """Rows of conflicts not counted: neither the genuine run nor a byte-identical copy of
    it."""
    workloads: tuple[Workload, ...] = ()
    """Every workload of a configuration compared, in label order."""
    set_aside_verdicts: tuple[tuple[str, str], ...] = field(default=())
    """(source, verdict) of each row set aside."""

    def headline(self) -> str:
        """One sentence whose counts add up to the index's rows."""
        parts = [
            f"{counted(len(self.copies), 'identical copy', 'identical copies')} counted once",
            f"{counted(self.set_aside, 'conflicting copy', 'conflicting copies')} set aside",
            f"{counted(self.runs - self.compared, 'run')} with nothing to compare",
            f"{counted(self.not_audited, 'source')} not audited",
        ]
        return (
            f"{counted(self.compared, 'run')} compared, of "
            f"{counted(self.index_rows, 'index row')}: "
            f"{counted(self.runs, 'distinct run')}, " + ", ".join(parts)
        )

    def table_rows(self) -> list[dict[str, Any]]:
        """The CSV's rows: ranked first, then those not accepted (`CSV_COLUMNS`)."""
        return [
            {**asdict(r), "experiments": ";".join(r.experiments), "sources": ";".join(r.sources)}
            for r in (*self.ranked, *self.not_accepted)
        ]

    def to_json(self) -> dict[str, Any]:
        """schemas/comparison.schema.json."""

        def row(r: ConfigRow) -> dict[str, Any]:
            return {**asdict(r), "experiments": list(r.experiments), "sources": list(r.sources)}

        return {
            "schema_version": SCHEMA_VERSION,
            "index_sha256": self.index_sha256,
            "headline": self.headline(),
            "counts": {
                "index_rows": self.index_rows,
                "runs": self.runs,
                "compared": self.compared,
                "copies": len(self.copies),
                "set_aside": self.set_aside,
                "not_audited": self.not_audited,
            },
            "verdicts": dict(self.verdicts),
            "workloads": [{**asdict(w), "description": w.describe()} for w in self.workloads],
            "choices": [
                {
                    "protocol": c.best.protocol,
                    "workload": c.best.workload,
                    "workload_label": c.best.workload_label,
                    "hardware": c.best.hardware,
                    "offer_id": c.best.offer_id,
                    "best": row(c.best),
                    "runner_up": row(c.runner_up) if c.runner_up else None,
                    "told_apart": c.told_apart,
                }
                for c in self.choices
            ],
            "ranked": [row(r) for r in self.ranked],
            "not_accepted": [row(r) for r in self.not_accepted],
            "copies": [{"source": s, "copy_of": o} for s, o in self.copies],
            "conflicts": [
                {
                    "manifest_sha256": c.manifest_sha256,
                    "genuine": c.genuine,
                    "members": [asdict(m) for m in c.members],
                }
                for c in self.conflicts
            ],
            "other_runs": [{"source": s, "why": w} for s, w in self.other_runs],
        }


def counted(k: int, one: str, many: str | None = None) -> str:
    return f"{k:,} {one if k == 1 else many or one + 's'}"


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
class _Groups:
    """The configurations of the runs, grouped: ranked ones per offer, others per status;
    and each workload group's runs."""

    ranked: dict[tuple, list[dict]]
    other: dict[tuple, list[dict]]
    seen: dict[Key, int]
    accepted: dict[Key, int]
    workloads: dict[str, dict[str, Any]]


def _group(runs: list[dict[str, Any]]) -> _Groups:
    g = _Groups({}, {}, {}, {}, {})
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


def _row(
    g: _Groups,
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


def _rank_key(r: ConfigRow) -> tuple:
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


def _numbered(ranked: list[ConfigRow]) -> Iterator[ConfigRow]:
    """RANKED (sorted by `_rank_key`) numbered from 1 within each protocol and workload."""
    n, group = 0, None
    for r in ranked:
        n = n + 1 if (r.protocol, r.workload_label) == group else 1
        group = (r.protocol, r.workload_label)
        yield replace(r, rank=n)


def _choices(ranked: tuple[ConfigRow, ...]) -> tuple[Choice, ...]:
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
    return tuple(sorted(out, key=lambda c: _rank_key(c.best)))


def shown_sources(sources: list[str]) -> dict[str, str]:
    """Each source as the comparison shows it: an absolute path made relative to the
    folder that holds every absolute source (`/home/me/runs/a` and `/home/me/runs/b` read
    `a` and `b`), so a signed comparison carries no local path of the machine that built
    the archive; what follows an archive file's `!/` is kept; relative sources stay as
    given. Distinct sources stay distinct (one common prefix is removed from all)."""

    def path_part(source: str) -> str:
        return source.split("!/", 1)[0]

    absolute = [path_part(s) for s in sources if PurePosixPath(path_part(s)).is_absolute()]
    if not absolute:
        return {}
    base = posixpath.commonpath([posixpath.dirname(a.rstrip("/")) or "/" for a in absolute])
    return {
        s: posixpath.relpath(path_part(s), base) + s[len(path_part(s)) :]
        for s in sources
        if PurePosixPath(path_part(s)).is_absolute()
    }


def compare(archive_dir: Path) -> Comparison:
    """The comparison of the index in ARCHIVE_DIR (written by `audit archive`)."""
    import polars as pl

    root = Path(archive_dir)
    path = root / index.INDEX
    if problem := wrong_kind(root, "archive", "audit compare"):
        raise AuditorError(problem)
    if not path.is_file():
        raise AuditorError(f"{root}: no {index.INDEX} (run audit archive SOURCES --out {root})")
    if index.interrupted(root):
        raise AuditorError(
            f"{root}: an archive audit was interrupted; run it again to finish "
            "the index before comparing"
        )
    if pl.read_parquet_schema(path) != index.INDEX_SCHEMA:
        raise AuditorError(
            f"{path}: written by another version of the auditor; run audit "
            f"archive again with --out {root} to rebuild it"
        )
    idx = pl.read_parquet(path).sort("source")
    shown = shown_sources(idx["source"].to_list())
    idx = idx.with_columns(pl.col("source").replace_strict(shown, default=pl.col("source")))
    is_run = (pl.col("kind") == "run") & pl.col("verdict").is_in(list(AUDITED))
    audited = (
        idx.filter(is_run)
        .select(
            "source",
            "protocol",
            "experiment_id",
            "verdict",
            "reason",
            "manifest_sha256",
            "content_sha256",
            "matches_manifest",
            "configurations",
            "workload_name",
            "corpus_revision",
            "model_revision",
            "tokenizer_revision",
            "config_revision",
            "recipe",
            "trained",
        )
        .to_dicts()
    )
    who = identify(audited)
    with_configs = [r for r in who.counted if r["configurations"]]
    g = _group(with_configs)
    works = workloads(g.workloads)
    ranked = sorted(
        (_row(g, works, k, v, "accepted", k[5]) for k, v in g.ranked.items()), key=_rank_key
    )
    others = sorted(
        (_row(g, works, k, v, k[5], None) for k, v in g.other.items()),
        key=lambda r: (
            r.protocol,
            label_order(r.workload_label),
            r.hardware,
            natural_key(r.config_id),
            r.precision or "",
            r.status,
        ),
    )
    numbered = tuple(_numbered(ranked))
    nothing = [
        (r["source"], f"{r['verdict']}: {r['reason']}" if r["reason"] else r["verdict"])
        for r in who.counted
        if not r["configurations"]
    ]
    unjudged = idx.filter(~is_run).select("source", "reason", "verdict").iter_rows()
    nothing += [(s, f"{v}: {r}" if r else v) for s, r, v in unjudged]
    return Comparison(
        index_sha256=_sha256(path),
        index_rows=idx.height,
        runs=len(who.counted),
        compared=len(with_configs),
        copies=tuple(who.copies),
        conflicts=tuple(who.conflicts),
        set_aside=who.set_aside,
        not_audited=idx.height - len(audited),
        verdicts=tuple(
            (v, int(n))
            for v, n in idx["verdict"]
            .value_counts(sort=True)
            .sort(["count", "verdict"], descending=[True, False])
            .iter_rows()
        ),
        choices=_choices(numbered),
        ranked=numbered,
        not_accepted=tuple(others),
        other_runs=tuple(sorted(nothing)),
        workloads=tuple(sorted(works.values(), key=lambda w: label_order(w.label))),
        set_aside_verdicts=who.set_aside_sources,
    )


def _sha256(path: Path) -> str:
    from auditor.fsutil import sha256_file

    return sha256_file(path)
