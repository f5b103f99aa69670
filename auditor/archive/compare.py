"""`audit compare DIR`: the configurations of an archive's index side by side, for
procurement, and their signed report.

A configuration is (protocol, GPU model as evidenced, variant or policy, precision), costed
per offer. Its figures come only from the index (what the auditor recomputed from each
run's raw files):

- copies of one run (the same manifest hash, so the same evidence) count once;
- a configuration accepted in a run is ranked with that run's warm median, throughput and,
  for each offer of the GPU the run measured (and only those), the package cost and the cost
  per accepted corpus; over several runs, the median of the runs' figures;
- a configuration a run did not accept is listed apart with that run's main reason, never
  ranked (A10.2), whatever its time; runs with no configuration to compare (not audited,
  refused, or rejected before one could be read) are listed too.

Ranked within its protocol, never across: protocol A configurations by cost per accepted
corpus, then warm median; protocol B policies by joules per inference, then median trial wall
time (a trial's wall time is not a warm pass's, so the two are never in one ranking). The
report reuses the run report's machinery (`auditor.report.build.write_signed_dir`: atomic
output, PDF/A with attachments, PAdES signature, DSSE bundle), so `audit verify` checks it
the same way.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from auditor.archive import index
from auditor.errors import AuditorError
from auditor.protocols.names import LETTER, PROTOCOL_B

CPU = "CPU"
"""The GPU model of a configuration whose run used no GPU."""
TEMPLATE = "comparison.html.j2"
CSV_COLUMNS = (
    "rank", "status", "protocol", "gpu_model", "config_id", "precision", "offer_id", "runs",
    "accepted_runs", "all_runs", "experiments", "median_warm_s", "min_warm_s", "max_warm_s",
    "throughput_per_s", "package_total_usd_minor", "cost_per_accepted_corpus_usd_minor",
    "joules_per_inference", "average_power_w", "p95_ms", "reason")
#: The protocol B figures a row carries, as the run summary's `extra` names them.
ENERGY_FIGURES = {"joules_per_inference": "joules_per_inference",
                  "average_power_w": "avg_power_w", "p95_ms": "p95_ms"}


@dataclass(frozen=True)
class ConfigRow:
    """One line of the comparison: a configuration (and offer, when ranked)."""

    rank: int | None
    """Within its protocol: 1 = cheapest per accepted corpus (A) or fewest joules per
    inference (B); None for a configuration not accepted."""
    status: str
    """`accepted`; else the runs' verdict (`rejected`, `incomplete`) or `not accepted` (a
    pass of it was not accepted in a run otherwise accepted)."""
    protocol: str
    """The runs' protocol (`accepted-corpus-cost`, `residency-energy`)."""
    gpu_model: str
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
    experiments: tuple[str, ...]
    median_warm_s: float | None
    """Median over the runs of their warm median (protocol A) or of their median trial
    wall time (protocol B)."""
    min_warm_s: float | None
    max_warm_s: float | None
    """Smallest and largest warm median among those runs."""
    throughput_per_s: float | None
    package_total_usd_minor: int | None
    cost_per_accepted_corpus_usd_minor: float | None
    joules_per_inference: float | None
    average_power_w: float | None
    p95_ms: float | None
    """Protocol B: medians over the runs of the policy's recomputed figures; None for A."""
    reason: str | None
    """Not accepted: the main reason; accepted without a cost: why there is none."""


@dataclass(frozen=True)
class Comparison:
    index_sha256: str
    runs: int
    """Distinct runs with configurations (copies counted once)."""
    duplicates: int
    """Index rows left out as copies of a run already counted."""
    verdicts: tuple[tuple[str, int], ...]
    """Rows of the index per verdict (copies included)."""
    ranked: tuple[ConfigRow, ...]
    not_accepted: tuple[ConfigRow, ...]
    other_runs: tuple[tuple[str, str], ...]
    """(source, why) of what has no configuration to compare: runs and sources that could
    not be audited, or refused, and runs rejected before any configuration could be read."""

    def table_rows(self) -> list[dict[str, Any]]:
        """The CSV's rows: ranked first, then those not accepted (`CSV_COLUMNS`)."""
        return [{**asdict(r), "experiments": ";".join(r.experiments)}
                for r in (*self.ranked, *self.not_accepted)]

    def to_json(self) -> dict[str, Any]:
        """schemas/comparison.schema.json."""
        def row(r: ConfigRow) -> dict[str, Any]:
            return {**asdict(r), "experiments": list(r.experiments)}

        return {
            "schema_version": "2", "index_sha256": self.index_sha256, "runs": self.runs,
            "duplicates": self.duplicates, "verdicts": dict(self.verdicts),
            "ranked": [row(r) for r in self.ranked],
            "not_accepted": [row(r) for r in self.not_accepted],
            "other_runs": [{"source": s, "why": w} for s, w in self.other_runs],
        }


def _median(values: list[Any]) -> Any:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _finite(v: Any) -> float | None:
    ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    return float(v) if ok else None


def _median_int(values: list[Any]) -> int | None:
    vals = [v for v in values if v is not None]
    return statistics.median_low(vals) if vals else None


Key = tuple[str, str, str, str | None]
"""A configuration: (protocol, GPU model as evidenced, variant or policy, precision)."""


@dataclass
class _Groups:
    """The configurations of an index, grouped: ranked ones per offer, others per status."""

    ranked: dict[tuple, list[dict]]
    other: dict[tuple, list[dict]]
    seen: dict[Key, int]
    accepted: dict[Key, int]


def _group(configs: Any) -> _Groups:
    g = _Groups({}, {}, {}, {})
    for c in configs.iter_rows(named=True):
        c["extra"] = json.loads(c["extra_json"]) if c["extra_json"] else {}
        key = (c["protocol"] or "unknown", _device(c), c["config_id"], c["precision"])
        g.seen[key] = g.seen.get(key, 0) + 1
        g.accepted[key] = g.accepted.get(key, 0) + bool(c["accepted"])
        if not c["accepted"]:
            status = c["verdict"] if c["verdict"] != "accepted" else "not accepted"
            g.other.setdefault((*key, status), []).append(c)
            continue
        # Only offers of the GPU the run measured: its accepted count says nothing of others.
        here = [o for o in c["costs"] or [] if o["measured_here"]] or [
            {"offer_id": None, "package_total_usd_minor": None,
             "cost_per_accepted_corpus_usd_minor": None,
             "why_not": (f"no offer of {key[1]} among the run's offers"
                         if c["protocol"] != PROTOCOL_B else "no cost in protocol B")}]
        for o in here:
            g.ranked.setdefault((*key, o["offer_id"]), []).append({**c, "offer": o})
    return g


def _device(c: dict[str, Any]) -> str:
    """The GPU model as evidenced (protocol A); a protocol B policy's runtime and compute
    units, which name the accelerator it was placed on (an NPU is no GPU, and no CPU)."""
    if c["protocol"] == PROTOCOL_B:
        parts = [str(c["extra"][k]) for k in ("runtime", "compute_units") if c["extra"].get(k)]
        return " ".join(parts) or c["gpu_model"] or CPU
    return c["gpu_model"] or CPU


def _row(g: _Groups, key: tuple, items: list[dict], status: str,
         offer_id: str | None) -> ConfigRow:
    """One line of the comparison: the median over its runs of their figures."""
    medians = [i["median_s"] for i in items if i["median_s"] is not None]
    energy = {name: _median([_finite(i["extra"].get(src)) for i in items])
              for name, src in ENERGY_FIGURES.items()}
    offers = [i.get("offer") or {} for i in items]
    reasons = ([o.get("why_not") for o in offers] if status == "accepted" else
               [f"{i['reason']}: {i['run_reason']}" if i["run_reason"] and i["reason"]
                else i["reason"] or i["run_reason"] for i in items])
    return ConfigRow(
        rank=None, status=status, protocol=key[0], gpu_model=key[1], config_id=key[2],
        precision=key[3], offer_id=offer_id, runs=len(items), accepted_runs=g.accepted[key[:4]],
        all_runs=g.seen[key[:4]],
        experiments=tuple(sorted({i["experiment_id"] for i in items if i["experiment_id"]})),
        median_warm_s=_median(medians), min_warm_s=min(medians, default=None),
        max_warm_s=max(medians, default=None),
        throughput_per_s=_median([i["throughput_per_s"] for i in items]),
        package_total_usd_minor=_median_int([o.get("package_total_usd_minor")
                                             for o in offers]),
        cost_per_accepted_corpus_usd_minor=_median(
            [o.get("cost_per_accepted_corpus_usd_minor") for o in offers]),
        **energy, reason=next((r for r in reasons if r), None))


def _rank_key(r: ConfigRow) -> tuple:
    """Protocol A: cheapest per accepted corpus, then fastest warm median; protocol B:
    fewest joules per inference, then shortest median trial; a missing figure last."""
    first = (r.joules_per_inference if r.protocol == PROTOCOL_B
             else r.cost_per_accepted_corpus_usd_minor)
    return (r.protocol, first is None, first or 0.0, r.median_warm_s is None,
            r.median_warm_s or 0.0, r.gpu_model, r.config_id, r.precision or "",
            r.offer_id or "")


def _numbered(ranked: list[ConfigRow]) -> Iterator[ConfigRow]:
    """RANKED (sorted by `_rank_key`) numbered from 1 within each protocol."""
    n, protocol = 0, None
    for r in ranked:
        n = n + 1 if r.protocol == protocol else 1
        protocol = r.protocol
        yield replace(r, rank=n)


def compare(archive_dir: Path) -> Comparison:
    """The comparison of the index in ARCHIVE_DIR (written by `audit archive`)."""
    import polars as pl

    root = Path(archive_dir)
    path = root / index.INDEX
    if not path.is_file():
        raise AuditorError(f"{root}: no {index.INDEX} (run audit archive SOURCES --out {root})")
    if index.interrupted(root):
        raise AuditorError(f"{root}: an archive audit was interrupted; run it again to finish "
                           "the index before comparing")
    idx = pl.read_parquet(path).sort("source")
    audited = idx.filter((pl.col("kind") == "run")
                         & pl.col("verdict").is_in(["accepted", "rejected", "incomplete"]))
    # Copies of one run (one manifest, so the same evidence) count once.
    runs = audited.filter(pl.col("manifest_sha256").is_null()
                          | pl.col("manifest_sha256").is_first_distinct())
    empty = runs.filter(pl.col("configurations").list.len() == 0)["source"]
    nothing = idx.filter(~pl.col("source").is_in(audited["source"].implode())
                         | pl.col("source").is_in(empty.implode()))
    g = _group(runs.select("source", "protocol", "experiment_id", "verdict",
                           pl.col("reason").alias("run_reason"), "configurations")
               .explode("configurations").drop_nulls("configurations")
               .unnest("configurations"))
    ranked = sorted((_row(g, k, v, "accepted", k[4]) for k, v in g.ranked.items()),
                    key=_rank_key)
    others = sorted((_row(g, k, v, k[4], None) for k, v in g.other.items()),
                    key=lambda r: (r.protocol, r.gpu_model, r.config_id, r.precision or "",
                                   r.status))
    return Comparison(
        index_sha256=_sha256(path), runs=runs.height, duplicates=audited.height - runs.height,
        verdicts=tuple((v, int(n)) for v, n in
                       idx["verdict"].value_counts(sort=True).iter_rows()),
        ranked=tuple(_numbered(ranked)),
        not_accepted=tuple(others),
        other_runs=tuple((s, f"{v}: {r}" if r else v) for s, r, v in
                         nothing.select("source", "reason", "verdict").iter_rows()))


def _sha256(path: Path) -> str:
    from auditor.fsutil import sha256_file

    return sha256_file(path)


# -- the signed report -------------------------------------------------------------------

def viewmodel(cmp: Comparison, *, generated_at: str, signer: str | None) -> dict[str, Any]:
    """The page's tree: JSON values only, like the run report's view model."""
    from auditor import __version__
    from auditor.report.viewmodel import signature_section

    doc = cmp.to_json()
    return {
        "title": f"Archive comparison: {cmp.runs} run(s)",
        "tool": {"name": "gpubench-audit", "version": __version__},
        "generated_at": generated_at,
        "signature": signature_section(signer),
        "index_sha256": cmp.index_sha256,
        "runs": cmp.runs, "duplicates": cmp.duplicates, "verdicts": doc["verdicts"],
        "ranked": doc["ranked"],
        "not_accepted": [{**r, "protocol_letter": LETTER.get(r["protocol"], "?")}
                         for r in doc["not_accepted"]],
        # each protocol's ranking is its own table (a trial's wall time is not a warm pass's)
        "ranked_a": [r for r in doc["ranked"] if r["protocol"] != PROTOCOL_B],
        "ranked_b": [r for r in doc["ranked"] if r["protocol"] == PROTOCOL_B],
        "other_runs": doc["other_runs"],
    }


def build_comparison_report(archive_dir: Path, out_dir: Path, *, key: Path | None = None,
                            cert: Path | None = None, chain: Path | None = None,
                            now: Callable[[], Any] | None = None,
                            tsa: str | None = None) -> Comparison:
    """Write the signed comparison report of ARCHIVE_DIR's index into OUT_DIR: report.html,
    report.pdf (comparison.json and .csv attached), comparison.json, comparison.csv, and a
    copy of the index and findings it rests on (`archive/`), all listed in the DSSE bundle."""
    from auditor import output
    from auditor.report import dsse, html, plots
    from auditor.report.build import (
        StepTimer,
        load_signing,
        subject,
        timestamp,
        write_signed_dir,
    )

    archive_dir, out_dir = Path(archive_dir), Path(out_dir)
    if out_dir.resolve() == archive_dir.resolve():
        raise AuditorError(f"{out_dir}: the report cannot replace the archive's folder")
    signer = load_signing(key, cert, chain, tsa)
    cmp = compare(archive_dir)
    generated_at = timestamp(now)
    vm = viewmodel(cmp, generated_at=generated_at,
                   signer=subject(cert) if cert is not None else None)
    page = html.render_page(TEMPLATE, vm, {"cost": plots.cost_vs_throughput(vm["ranked"])})
    as_json = output.render(output.COMPARISON, "json", cmp).encode()
    as_csv = output.render(output.COMPARISON, "csv", cmp).encode()
    files = {"comparison.json": as_json, "comparison.csv": as_csv,
             f"archive/{index.INDEX}": (archive_dir / index.INDEX).read_bytes()}
    if (archive_dir / index.FINDINGS).is_file():
        files[f"archive/{index.FINDINGS}"] = (archive_dir / index.FINDINGS).read_bytes()
    attachments = [("comparison.json", as_json, "The comparison (audit compare --format json)"),
                   ("comparison.csv", as_csv, "The comparison table (audit compare --format "
                                              "csv)")]

    def predicate(digests: dict[str, str]) -> dict[str, Any]:
        from auditor import __version__

        return {"kind": "comparison", "index_sha256": cmp.index_sha256, "runs": cmp.runs,
                "ranked": len(cmp.ranked), "not_accepted": len(cmp.not_accepted),
                "other_runs": len(cmp.other_runs), "verdicts": dict(cmp.verdicts),
                "tool": {"name": "gpubench-audit", "version": __version__},
                "generated_at": generated_at}

    from auditor.report.build import author
    from auditor.report.pdf import Metadata

    metadata = Metadata(
        title=vm["title"], author=author(vm["signature"]["signer"]),
        subject=(f"gpubench-audit comparison of {cmp.runs} run(s), {len(cmp.ranked)} "
                 f"configuration(s) ranked; archive index SHA-256 {cmp.index_sha256}"),
        keywords=("gpubench-audit", "archive comparison", f"index sha256 {cmp.index_sha256}"),
        created=generated_at)
    write_signed_dir(out_dir, page=page, files=files, attachments=attachments, signer=signer,
                     cert=cert, key=key, predicate=predicate,
                     predicate_type=dsse.COMPARISON_PREDICATE_TYPE, timer=StepTimer(),
                     metadata=metadata)
    return cmp

