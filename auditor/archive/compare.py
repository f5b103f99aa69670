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

What is ranked (A10.2: only accepted configurations, within each protocol and workload)
and what to buy (page 1: per workload, hardware and offer, the best ranked configuration
and how sure it is) are `auditor.archive.ranking`; this module reads and checks the index,
counts its rows and puts the `Comparison` together. The signed report of a comparison is
`auditor.archive.compare_report`.
"""

from __future__ import annotations

import posixpath
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from auditor.archive import frames, index, ranking
from auditor.archive.copies import Conflict, identify
from auditor.archive.ranking import Choice, ConfigRow
from auditor.archive.workloads import Workload, label_order, workloads
from auditor.dirkind import wrong_kind
from auditor.errors import AuditorError
from auditor.present import natural_key

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
    if pl.read_parquet_schema(path) != frames.INDEX_SCHEMA:
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
    g = ranking.group(with_configs)
    works = workloads(g.workloads)
    ranked = sorted(
        (ranking.row(g, works, k, v, "accepted", k[5]) for k, v in g.ranked.items()),
        key=ranking.rank_key,
    )
    others = sorted(
        (ranking.row(g, works, k, v, k[5], None) for k, v in g.other.items()),
        key=lambda r: (
            r.protocol,
            label_order(r.workload_label),
            r.hardware,
            natural_key(r.config_id),
            r.precision or "",
            r.status,
        ),
    )
    numbered = tuple(ranking.numbered(ranked))
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
        choices=ranking.choices(numbered),
        ranked=numbered,
        not_accepted=tuple(others),
        other_runs=tuple(sorted(nothing)),
        workloads=tuple(sorted(works.values(), key=lambda w: label_order(w.label))),
        set_aside_verdicts=who.set_aside_sources,
    )


def _sha256(path: Path) -> str:
    from auditor.fsutil import sha256_file

    return sha256_file(path)
