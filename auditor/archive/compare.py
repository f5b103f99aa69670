"""`audit compare DIR`: what to buy, from an archive's index, and its signed report.

A configuration is (protocol, hardware, variant or policy, precision), costed per offer:
the hardware is the GPU model as evidenced (protocol A) or a policy's runtime and compute
units (protocol B). Every figure comes from the index, which holds only what the auditor
recomputed from each run's raw files; nothing here judges a run or computes a figure of a
run (those are the protocols' summaries), it only groups, takes medians and ranks.

Which rows are runs:

- rows that share a manifest and all their bytes (`content_sha256`) are copies of one run:
  it counts once, the others are listed as its copies;
- rows that share a manifest but not their bytes are a conflict (a copy was edited): the
  version whose files match its manifest (`matches_manifest`) is the run, the others are set
  aside and listed with the conflict, and when no version matches, none is counted;
- every row is in exactly one of: runs (with or without a configuration to compare),
  copies, set aside, or not audited (`Comparison.headline` says how many of each).

What is ranked (A10.2: only accepted configurations; protocol B policies apart):

- a configuration a run accepted is ranked with that run's warm median, its passes' range,
  throughput and, for each offer of the GPU the run measured (and only those), the package
  cost and the cost per accepted corpus in integer minor units; over several runs, the
  median of the runs' figures, the range over all their passes, and whether the runs agree;
- protocol A by cost per accepted corpus, then warm median; protocol B by joules per
  inference, then median trial wall time; ranks start at 1 in each protocol;
- a configuration a run did not accept is listed apart with its reason (in a few words)
  and its detail (the deciding finding's code and message), never ranked, however fast.

What to buy (page 1): per protocol, hardware and offer, the best ranked configuration, with
how sure it is: whether its passes' range and the runner-up's are apart, and whether the
runs it rests on agree. The signed report
of a comparison is `auditor.archive.compare_report`.
"""

from __future__ import annotations

import json
import math
import posixpath
import statistics
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from auditor.archive import index
from auditor.dirkind import wrong_kind
from auditor.errors import AuditorError
from auditor.present import natural_key
from auditor.protocols.names import PROTOCOL_B

CPU = "CPU"
"""The hardware of a protocol A configuration whose run used no GPU."""
TEMPLATE = "comparison.html.j2"
SCHEMA_VERSION = "3"
AUDITED = ("accepted", "rejected", "incomplete")
"""Index verdicts of a run the auditor could judge."""
CSV_COLUMNS = (
    "rank", "status", "protocol", "hardware", "config_id", "precision", "offer_id", "runs",
    "accepted_runs", "all_runs", "runs_agree", "experiments", "sources", "median_s",
    "pass_min_s", "pass_max_s", "throughput_per_s", "currency", "package_total_minor",
    "cost_per_accepted_corpus_minor", "joules_per_inference", "average_power_w", "p95_ms",
    "reason", "detail")
#: The protocol B figures a row carries, as the run summary's figures name them.
ENERGY_FIGURES = {"joules_per_inference": "joules_per_inference",
                  "average_power_w": "avg_power_w", "p95_ms": "p95_ms"}


@dataclass(frozen=True)
class ConfigRow:
    """One line of the comparison: a configuration (and offer, when ranked)."""

    rank: int | None
    """Within its protocol: 1 = cheapest per accepted corpus (A) or fewest joules per
    inference (B); None for a configuration not accepted."""
    status: str
    """The configuration's verdict in its runs: `accepted` (ranked), `rejected`,
    `incomplete`, or `baseline` (protocol B's CPU-only reference policy)."""
    protocol: str
    """The runs' protocol (`accepted-corpus-cost`, `residency-energy`)."""
    hardware: str
    """Protocol A: the GPU model as evidenced (`CPU` for none); protocol B: the policy's
    runtime and compute units."""
    config_id: str
    precision: str | None
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
    """Protocol B: medians over the runs of the policy's recomputed figures; None for A."""
    reason: str | None
    """Not accepted: why, in a few words; accepted without a cost: why there is none."""
    detail: str | None
    """Not accepted: the deciding finding's code and message (the configuration's own, else
    the run's, said so)."""


@dataclass(frozen=True)
class Choice:
    """What to buy on one hardware and offer: the best ranked configuration there."""

    best: ConfigRow
    runner_up: ConfigRow | None
    """The next ranked configuration on the same hardware and offer."""
    told_apart: bool | None
    """Protocol A: the best's passes and the runner-up's do not overlap (their ranges are
    apart), so the order of the two is measured, not noise; None without a runner-up, and
    for protocol B (the index keeps one energy figure per run, not one per trial)."""


@dataclass(frozen=True)
class ConflictMember:
    source: str
    matches_manifest: bool | None
    verdict: str
    content_sha256: str | None


@dataclass(frozen=True)
class Conflict:
    """Index rows that share a manifest but not their bytes."""

    manifest_sha256: str
    members: tuple[ConflictMember, ...]
    genuine: str | None
    """The source counted as the run: the one whose files match its manifest; None when no
    version (or more than one) does, and then none of them is counted."""


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

    def headline(self) -> str:
        """One sentence whose counts add up to the index's rows."""
        parts = [f"{counted(len(self.copies), 'identical copy', 'identical copies')} counted once",
                 f"{counted(self.set_aside, 'conflicting copy', 'conflicting copies')} set aside",
                 f"{counted(self.runs - self.compared, 'run')} with nothing to compare",
                 f"{counted(self.not_audited, 'source')} not audited"]
        return (f"{counted(self.compared, 'run')} compared, of "
                f"{counted(self.index_rows, 'index row')}: "
                f"{counted(self.runs, 'distinct run')}, " + ", ".join(parts))

    def table_rows(self) -> list[dict[str, Any]]:
        """The CSV's rows: ranked first, then those not accepted (`CSV_COLUMNS`)."""
        return [{**asdict(r), "experiments": ";".join(r.experiments),
                 "sources": ";".join(r.sources)}
                for r in (*self.ranked, *self.not_accepted)]

    def to_json(self) -> dict[str, Any]:
        """schemas/comparison.schema.json."""
        def row(r: ConfigRow) -> dict[str, Any]:
            return {**asdict(r), "experiments": list(r.experiments), "sources": list(r.sources)}

        return {
            "schema_version": SCHEMA_VERSION, "index_sha256": self.index_sha256,
            "headline": self.headline(),
            "counts": {"index_rows": self.index_rows, "runs": self.runs,
                       "compared": self.compared, "copies": len(self.copies),
                       "set_aside": self.set_aside, "not_audited": self.not_audited},
            "verdicts": dict(self.verdicts),
            "choices": [{"protocol": c.best.protocol, "hardware": c.best.hardware,
                         "offer_id": c.best.offer_id, "best": row(c.best),
                         "runner_up": row(c.runner_up) if c.runner_up else None,
                         "told_apart": c.told_apart} for c in self.choices],
            "ranked": [row(r) for r in self.ranked],
            "not_accepted": [row(r) for r in self.not_accepted],
            "copies": [{"source": s, "copy_of": o} for s, o in self.copies],
            "conflicts": [{"manifest_sha256": c.manifest_sha256, "genuine": c.genuine,
                           "members": [asdict(m) for m in c.members]}
                          for c in self.conflicts],
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


# -- which rows are runs ---------------------------------------------------------------

@dataclass
class _Identity:
    counted: list[dict[str, Any]]
    copies: list[tuple[str, str]]
    conflicts: list[Conflict]
    set_aside: int = 0


def _identify(rows: list[dict[str, Any]]) -> _Identity:
    """Copies and conflicts among audited ROWS (sorted by source): the rows counted as runs,
    in source order."""
    out = _Identity([], [], [], 0)
    by_manifest: dict[str, list[dict[str, Any]]] = {}
    alone: list[dict[str, Any]] = []
    for r in rows:
        (by_manifest.setdefault(r["manifest_sha256"], []) if r["manifest_sha256"]
         else alone).append(r)
    counted = list(alone)
    for sha, group in by_manifest.items():
        versions: dict[str, list[dict[str, Any]]] = {}
        for r in group:  # a row whose bytes are unknown is a version of its own
            versions.setdefault(r["content_sha256"] or f"?{r['source']}", []).append(r)
        if len(versions) == 1:
            run = group[0]
        else:
            matching = [v for v in versions.values()
                        if all(r["matches_manifest"] is True for r in v)]
            run = matching[0][0] if len(matching) == 1 else None
            out.conflicts.append(Conflict(
                manifest_sha256=sha, genuine=run["source"] if run else None,
                members=tuple(ConflictMember(r["source"], r["matches_manifest"], r["verdict"],
                                             r["content_sha256"]) for r in group)))
        if run is None:
            out.set_aside += len(group)
            continue
        counted.append(run)
        copies = [(r["source"], run["source"]) for r in group
                  if r is not run and r["content_sha256"] is not None
                  and r["content_sha256"] == run["content_sha256"]]
        out.copies += copies
        out.set_aside += len(group) - 1 - len(copies)
    out.counted = sorted(counted, key=lambda r: r["source"])
    return out


# -- grouping and ranking --------------------------------------------------------------

Key = tuple[str, str, str, str | None]
"""A configuration: (protocol, hardware, variant or policy, precision)."""


@dataclass
class _Groups:
    """The configurations of the runs, grouped: ranked ones per offer, others per status."""

    ranked: dict[tuple, list[dict]]
    other: dict[tuple, list[dict]]
    seen: dict[Key, int]
    accepted: dict[Key, int]


def _group(runs: list[dict[str, Any]]) -> _Groups:
    g = _Groups({}, {}, {}, {})
    for run in runs:
        for c in run["configurations"] or []:
            c = {**c, "source": run["source"], "protocol": run["protocol"],
                 "experiment_id": run["experiment_id"], "run_verdict": run["verdict"],
                 "run_reason": run["reason"],
                 "figures": json.loads(c["figures_json"]) if c["figures_json"] else {}}
            key = (c["protocol"] or "unknown", _hardware(c), c["config_id"], c["precision"])
            g.seen[key] = g.seen.get(key, 0) + 1
            g.accepted[key] = g.accepted.get(key, 0) + bool(c["accepted"])
            if not c["accepted"]:
                g.other.setdefault((*key, c["verdict"] or "rejected"), []).append(c)
                continue
            # Only offers of the GPU the run measured: its accepted count says nothing else.
            here = [o for o in c["costs"] or [] if o["measured_here"]]
            if not here:
                why = (None if c["protocol"] == PROTOCOL_B
                       else f"no offer of {key[1]} among the run's offers")
                here = [{"offer_id": None, "currency": None, "package_total_minor": None,
                         "cost_per_accepted_corpus_minor": None, "why_not": why}]
            for o in here:
                g.ranked.setdefault((*key, o["offer_id"]), []).append({**c, "offer": o})
    return g


def _hardware(c: dict[str, Any]) -> str:
    """The GPU model as evidenced (protocol A); a protocol B policy's runtime and compute
    units, which name the accelerator it was placed on (an NPU is no GPU, and no CPU)."""
    if c["protocol"] == PROTOCOL_B:
        parts = [str(c["figures"][k]) for k in ("runtime", "compute_units")
                 if c["figures"].get(k)]
        return " ".join(parts) or c["gpu_model"] or CPU
    return c["gpu_model"] or CPU


def _overlap(items: list[dict[str, Any]]) -> bool | None:
    """Whether the pass ranges of ITEMS (one per run) share a common interval."""
    spans = [(i["min_s"], i["max_s"]) for i in items
             if i["min_s"] is not None and i["max_s"] is not None]
    if len(spans) < len(items) or not spans:
        return None
    return max(lo for lo, _ in spans) <= min(hi for _, hi in spans)


def _row(g: _Groups, key: tuple, items: list[dict], status: str,
         offer_id: str | None) -> ConfigRow:
    """One line of the comparison: the median over its runs of their figures."""
    items = sorted(items, key=lambda i: i["source"])
    ranked = status == "accepted"
    offers = [i.get("offer") or {} for i in items]
    energy = {name: _median([_finite(i["figures"].get(src)) for i in items])
              for name, src in ENERGY_FIGURES.items()}
    seen, accepted = g.seen[key[:4]], g.accepted[key[:4]]
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
        raise AuditorError(f"{key[2]} on {offer_id}: costs in several currencies "
                           f"({', '.join(currencies)}) cannot be one median")
    return ConfigRow(
        rank=None, status=status, protocol=key[0], hardware=key[1], config_id=key[2],
        precision=key[3], offer_id=offer_id, runs=len(items), accepted_runs=accepted,
        all_runs=seen, runs_agree=agree,
        experiments=tuple(sorted({i["experiment_id"] for i in items if i["experiment_id"]})),
        sources=tuple(i["source"] for i in items),
        median_s=_median([i["median_s"] for i in items]),
        pass_min_s=min((i["min_s"] for i in items if i["min_s"] is not None), default=None),
        pass_max_s=max((i["max_s"] for i in items if i["max_s"] is not None), default=None),
        throughput_per_s=_median([i["throughput_per_s"] for i in items]),
        currency=currencies[0] if currencies else None,
        package_total_minor=_median_int([o.get("package_total_minor") for o in offers]),
        cost_per_accepted_corpus_minor=_median_int(
            [o.get("cost_per_accepted_corpus_minor") for o in offers]),
        **energy, reason=reason, detail=detail)


def _rank_key(r: ConfigRow) -> tuple:
    """Protocol A: cheapest per accepted corpus, then fastest warm median; protocol B:
    fewest joules per inference, then shortest median trial; a missing figure last."""
    first = (r.joules_per_inference if r.protocol == PROTOCOL_B
             else r.cost_per_accepted_corpus_minor)
    return (r.protocol, first is None, first or 0, r.median_s is None, r.median_s or 0.0,
            r.hardware, natural_key(r.config_id), r.precision or "", r.offer_id or "")


def _numbered(ranked: list[ConfigRow]) -> Iterator[ConfigRow]:
    """RANKED (sorted by `_rank_key`) numbered from 1 within each protocol."""
    n, protocol = 0, None
    for r in ranked:
        n = n + 1 if r.protocol == protocol else 1
        protocol = r.protocol
        yield replace(r, rank=n)


def _choices(ranked: tuple[ConfigRow, ...]) -> tuple[Choice, ...]:
    """The best ranked configuration per protocol, hardware and offer, the cheapest first."""
    groups: dict[tuple, list[ConfigRow]] = {}
    for r in ranked:  # already in rank order
        groups.setdefault((r.protocol, r.hardware, r.offer_id), []).append(r)
    out = []
    for rows in groups.values():
        best = rows[0]
        up = rows[1] if len(rows) > 1 else None
        apart = None
        if up is not None and best.protocol != PROTOCOL_B and None not in (
                best.pass_min_s, best.pass_max_s, up.pass_min_s, up.pass_max_s):
            apart = best.pass_max_s < up.pass_min_s or up.pass_max_s < best.pass_min_s
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
    return {s: posixpath.relpath(path_part(s), base) + s[len(path_part(s)):]
            for s in sources if PurePosixPath(path_part(s)).is_absolute()}


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
        raise AuditorError(f"{root}: an archive audit was interrupted; run it again to finish "
                           "the index before comparing")
    if pl.read_parquet_schema(path) != index.INDEX_SCHEMA:
        raise AuditorError(f"{path}: written by another version of the auditor; run audit "
                           f"archive again with --out {root} to rebuild it")
    idx = pl.read_parquet(path).sort("source")
    shown = shown_sources(idx["source"].to_list())
    idx = idx.with_columns(pl.col("source").replace_strict(shown, default=pl.col("source")))
    is_run = (pl.col("kind") == "run") & pl.col("verdict").is_in(list(AUDITED))
    audited = idx.filter(is_run).select(
        "source", "protocol", "experiment_id", "verdict", "reason", "manifest_sha256",
        "content_sha256", "matches_manifest", "configurations").to_dicts()
    who = _identify(audited)
    with_configs = [r for r in who.counted if r["configurations"]]
    g = _group(with_configs)
    ranked = sorted((_row(g, k, v, "accepted", k[4]) for k, v in g.ranked.items()),
                    key=_rank_key)
    others = sorted((_row(g, k, v, k[4], None) for k, v in g.other.items()),
                    key=lambda r: (r.protocol, r.hardware, natural_key(r.config_id),
                                   r.precision or "", r.status))
    numbered = tuple(_numbered(ranked))
    nothing = [(r["source"], f"{r['verdict']}: {r['reason']}" if r["reason"] else r["verdict"])
               for r in who.counted if not r["configurations"]]
    unjudged = idx.filter(~is_run).select("source", "reason", "verdict").iter_rows()
    nothing += [(s, f"{v}: {r}" if r else v) for s, r, v in unjudged]
    return Comparison(
        index_sha256=_sha256(path), index_rows=idx.height, runs=len(who.counted),
        compared=len(with_configs), copies=tuple(who.copies), conflicts=tuple(who.conflicts),
        set_aside=who.set_aside, not_audited=idx.height - len(audited),
        verdicts=tuple((v, int(n)) for v, n in
                       idx["verdict"].value_counts(sort=True).sort(
                           ["count", "verdict"], descending=[True, False]).iter_rows()),
        choices=_choices(numbered), ranked=numbered, not_accepted=tuple(others),
        other_runs=tuple(sorted(nothing)))


def _sha256(path: Path) -> str:
    from auditor.fsutil import sha256_file

    return sha256_file(path)
