"""The archive's index: `index.parquet` (one row per run, or per source that holds none) and
`findings.parquet` (one row per finding or skipped rule), written as results stream in.

Streaming and crash safety: records are written in batches to part files under
`<out>/.parts/` (`findings-<seq>.parquet`, then `index-<seq>.parquet`, each through a temp
file and a rename, the index part last: it is the batch's commit). A killed audit leaves the
last `index.parquet` and whole parts, never half a file; the next run reads both, skips what
they hold and, at its end, compacts everything into new `index.parquet` and
`findings.parquet` (again temp file and rename) and removes the parts. Findings parts whose
index part never landed are dropped. Compaction streams the findings (`sink_parquet`), so
memory does not grow with the archive.

Incremental: a run is audited again only when its source is not in the index, or its
manifest hash, its files' fingerprint (paths, sizes, modification times) or the auditor's
version differ from the row's; `--force` audits everything again. The last row of a source
wins. Columns are documented in docs/archive.md and schemas/archive-*.frame.json.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

import polars as pl

from auditor.archive.sources import SourceProblem
from auditor.archive.worker import RunRecord
from auditor.archive.worker import auditor_version as auditor_version  # the rows' version
from auditor.model import Finding, RunIdentity, Skipped, workload_key

INDEX = "index.parquet"
FINDINGS = "findings.parquet"
PARTS = ".parts"

CURRENCY = "USD"
"""The currency of protocol A's offers (A8.2: prices in USD cents)."""
TIMESTAMP = pl.Datetime("us", "UTC")

_COST = pl.Struct(
    {
        "offer_id": pl.String,
        "gpu_model": pl.String,
        "lots": pl.Int64,
        "currency": pl.String,
        "package_total_minor": pl.Int64,
        "cost_per_accepted_corpus_minor": pl.Int64,
        "why_not": pl.String,
        "measured_here": pl.Boolean,
    }
)
_CONFIG = pl.Struct(
    {
        "config_id": pl.String,
        "verdict": pl.String,
        "accepted": pl.Boolean,
        "gpu_model": pl.String,
        "gpu_count": pl.Int64,
        "precision": pl.String,
        "median_s": pl.Float64,
        "min_s": pl.Float64,
        "max_s": pl.Float64,
        "throughput_per_s": pl.Float64,
        "reason": pl.String,
        "detail": pl.String,
        "costs": pl.List(_COST),
        "figures_json": pl.String,
        "context": pl.Int64,
        "workload": pl.String,
    }
)

INDEX_SCHEMA: dict[str, pl.DataType] = {
    "source": pl.String(),
    "kind": pl.String(),
    "run_dir": pl.String(),
    "audit_id": pl.String(),
    "audited_at": TIMESTAMP,
    "audit_seconds": pl.Float64(),
    "auditor_version": pl.String(),
    "fingerprint": pl.String(),
    "manifest_sha256": pl.String(),
    "content_sha256": pl.String(),
    "matches_manifest": pl.Boolean(),
    "protocol": pl.String(),
    "experiment_id": pl.String(),
    "verdict": pl.String(),
    "reason": pl.String(),
    "errors": pl.Int64(),
    "warnings": pl.Int64(),
    "infos": pl.Int64(),
    "skipped_rules": pl.Int64(),
    "gpu_models": pl.List(pl.String),
    "gpu_count": pl.Int64(),
    "variants": pl.List(pl.String),
    "accepted_variants": pl.List(pl.String),
    "configurations": pl.List(_CONFIG),
    # what the run is, re-derived from its files (RunIdentity): its workload, machine, span
    "workload_name": pl.String(),
    "corpus_revision": pl.String(),
    "model_revision": pl.String(),
    "tokenizer_revision": pl.String(),
    "config_revision": pl.String(),
    "recipe": pl.String(),
    "trained": pl.Boolean(),
    "host": pl.String(),
    "cpu": pl.String(),
    "gpus": pl.List(pl.String),
    "session_start": TIMESTAMP,
    "session_end": TIMESTAMP,
}
IDENTITY_COLUMNS = (
    "workload_name",
    "corpus_revision",
    "model_revision",
    "tokenizer_revision",
    "config_revision",
    "recipe",
    "trained",
    "host",
    "cpu",
    "gpus",
    "session_start",
    "session_end",
)
FINDINGS_SCHEMA: dict[str, pl.DataType] = {
    "audit_id": pl.String(),
    "source": pl.String(),
    "kind": pl.String(),
    "code": pl.String(),
    "severity": pl.String(),
    "protocol_ref": pl.String(),
    "title": pl.String(),
    "message": pl.String(),
    "artifact": pl.String(),
    "row": pl.Int64(),
    "line": pl.Int64(),
    "column": pl.Int64(),
    "pointer": pl.String(),
    "missing_evidence": pl.Boolean(),
    "evidence_json": pl.String(),
}
KEY_COLUMNS = ("source", "manifest_sha256", "fingerprint", "auditor_version")


def _now() -> datetime:
    return datetime.now(UTC)


def minor_units(value: float | Decimal | int | None) -> int | None:
    """An amount in minor units as an integer: a cost per accepted corpus that does not
    divide evenly (the protocol keeps it to a hundredth of a cent) is rounded half-even to a
    whole one, so money is an integer with its currency everywhere the archive writes it."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(Decimal(str(value)).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


# -- rows ------------------------------------------------------------------------------------


def record_row(rec: RunRecord, version: str, audit_id: str) -> dict[str, Any]:
    s = rec.summary
    counts = (
        dict(s.counts)
        if s is not None
        else {
            "error": sum(f.severity == "error" for f in rec.findings),
            "warning": sum(f.severity == "warning" for f in rec.findings),
            "info": sum(f.severity == "info" for f in rec.findings),
        }
    )
    configs = s.configurations if s is not None else ()
    ident = s.identity if s is not None else None
    models = sorted({m.strip() for c in configs if c.gpu_model for m in c.gpu_model.split(",")})
    return {
        "source": rec.source,
        "kind": "run",
        "run_dir": rec.run_dir,
        "audit_id": audit_id,
        "audited_at": _now(),
        "audit_seconds": rec.seconds,
        "auditor_version": version,
        "fingerprint": rec.fingerprint,
        "manifest_sha256": rec.manifest_sha256,
        "content_sha256": rec.content_sha256,
        "matches_manifest": rec.matches_manifest,
        "protocol": s.protocol if s is not None else None,
        "experiment_id": s.experiment_id if s is not None else None,
        "verdict": s.verdict if s is not None else "unreadable",
        "reason": rec.reason,
        "errors": counts.get("error", 0),
        "warnings": counts.get("warning", 0),
        "infos": counts.get("info", 0),
        "skipped_rules": len(rec.skipped),
        "gpu_models": models,
        "gpu_count": max((c.gpu_count for c in configs), default=0),
        "variants": [c.config_id for c in configs],
        "accepted_variants": [c.config_id for c in configs if c.accepted],
        "configurations": [
            {
                "config_id": c.config_id,
                "verdict": c.verdict,
                "accepted": c.accepted,
                "gpu_model": c.gpu_model,
                "gpu_count": c.gpu_count,
                "precision": c.precision,
                "median_s": c.median_s,
                "min_s": c.min_s,
                "max_s": c.max_s,
                "throughput_per_s": c.throughput_per_s,
                "reason": c.reason,
                "detail": c.detail,
                "costs": [
                    {
                        "offer_id": o.offer_id,
                        "gpu_model": o.gpu_model,
                        "lots": o.lots,
                        "currency": CURRENCY,
                        "package_total_minor": minor_units(o.package_total_usd_minor),
                        "cost_per_accepted_corpus_minor": minor_units(
                            o.cost_per_accepted_corpus_usd_minor
                        ),
                        "why_not": o.why_not,
                        "measured_here": o.measured_here,
                    }
                    for o in c.costs
                ],
                "figures_json": json.dumps(c.figures_json(), default=str, sort_keys=True),
                "context": c.context,
                "workload": workload_key(ident, c.precision, c.context),
            }
            for c in configs
        ],
        **identity_cells(ident),
    }


def identity_cells(ident: RunIdentity | None) -> dict[str, Any]:
    """The index's identity columns of a run (all null without an identity)."""
    if ident is None:
        return {c: [] if c == "gpus" else None for c in IDENTITY_COLUMNS}
    return {
        "workload_name": ident.name,
        "corpus_revision": ident.corpus,
        "model_revision": ident.model,
        "tokenizer_revision": ident.tokenizer,
        "config_revision": ident.config,
        "recipe": ident.recipe,
        "trained": ident.trained,
        "host": ident.host,
        "cpu": ident.cpu,
        "gpus": list(ident.gpus),
        "session_start": _timestamp(ident.started_at),
        "session_end": _timestamp(ident.ended_at),
    }


def _timestamp(iso: str | None) -> datetime | None:
    if iso is None:
        return None
    try:
        t = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t.astimezone(UTC) if t.tzinfo is not None else None


def problem_row(p: SourceProblem, version: str, audit_id: str) -> dict[str, Any]:
    return {
        "source": p.source,
        "kind": "source",
        "run_dir": None,
        "audit_id": audit_id,
        "audited_at": _now(),
        "audit_seconds": 0.0,
        "auditor_version": version,
        "fingerprint": p.fingerprint,
        "manifest_sha256": None,
        "content_sha256": None,
        "matches_manifest": None,
        "protocol": None,
        "experiment_id": None,
        "verdict": "refused" if p.refused else "unreadable",
        "reason": p.reason,
        "errors": len(p.findings),
        "warnings": 0,
        "infos": 0,
        "skipped_rules": 0,
        "gpu_models": [],
        "gpu_count": 0,
        "variants": [],
        "accepted_variants": [],
        "configurations": [],
        **identity_cells(None),
    }


def finding_rows(
    audit_id: str, source: str, findings: Iterable[Finding], skipped: Iterable[Skipped] = ()
) -> list[dict[str, Any]]:
    rows = [
        {
            "audit_id": audit_id,
            "source": source,
            "kind": "finding",
            "code": f.code,
            "severity": f.severity,
            "protocol_ref": f.protocol_ref,
            "title": f.title,
            "message": f.message,
            "artifact": f.artifact,
            "row": f.row,
            "line": f.line,
            "column": f.column,
            "pointer": f.pointer,
            "missing_evidence": f.missing_evidence,
            "evidence_json": json.dumps(f.evidence, default=str, sort_keys=True),
        }
        for f in findings
    ]
    rows += [
        {
            "audit_id": audit_id,
            "source": source,
            "kind": "skipped",
            "code": s.code,
            "severity": None,
            "protocol_ref": None,
            "title": None,
            "message": s.reason,
            "artifact": None,
            "row": None,
            "line": None,
            "column": None,
            "pointer": None,
            "missing_evidence": None,
            "evidence_json": None,
        }
        for s in skipped
    ]
    return rows


# -- files -----------------------------------------------------------------------------------


def _write(df: pl.DataFrame, path: Path) -> None:
    """Write DF to PATH through a temp file and a rename (fsync'd): all or nothing."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    df.write_parquet(tmp)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _parts(out: Path) -> tuple[list[Path], list[Path]]:
    """Committed index parts, and the findings parts that belong to them, in order."""
    d = out / PARTS
    if not d.is_dir():
        return [], []
    index = sorted(d.glob("index-*.parquet"))
    seqs = {p.name.removeprefix("index-") for p in index}
    findings = sorted(
        p for p in d.glob("findings-*.parquet") if p.name.removeprefix("findings-") in seqs
    )
    return index, findings


def interrupted(out: Path) -> bool:
    """Whether OUT holds committed parts not yet compacted (an audit that did not finish)."""
    return bool(_parts(Path(out))[0])


def load_index(out: Path, columns: list[str] | None = None) -> pl.DataFrame:
    """The index as committed so far (index.parquet and any parts of an interrupted audit),
    one row per source, the last written winning."""
    out = Path(out)
    files = [p for p in [out / INDEX] if p.is_file()] + _parts(out)[0]
    cols = list(INDEX_SCHEMA) if columns is None else list(columns)
    if not files:
        return pl.DataFrame(schema={c: INDEX_SCHEMA[c] for c in cols})
    want = cols if "source" in cols else ["source", *cols]
    df = pl.concat([pl.read_parquet(f, columns=want) for f in files])
    return df.unique(subset="source", keep="last", maintain_order=True).select(cols)


def load_findings(out: Path) -> pl.LazyFrame:
    """The findings of the rows `load_index` returns (lazily: they can be many)."""
    out = Path(out)
    files = [p for p in [out / FINDINGS] if p.is_file()] + _parts(out)[1]
    if not files:
        return pl.LazyFrame(schema=FINDINGS_SCHEMA)
    keep = load_index(out, ["audit_id"])["audit_id"]
    return pl.scan_parquet(files).filter(pl.col("audit_id").is_in(keep.implode()))


def drop_if_outdated(out: Path) -> bool:
    """Remove OUT's index, findings and parts when they were written with other columns (an
    older auditor): every run is audited again anyway, since the auditor version differs,
    and rows of two layouts cannot be one index. Returns whether it removed them."""
    out = Path(out)
    files = [p for p in [out / INDEX] if p.is_file()] + _parts(out)[0]
    if all(pl.read_parquet_schema(f) == INDEX_SCHEMA for f in files):
        return False
    for p in [out / INDEX, out / FINDINGS, *(out / PARTS).glob("*")]:
        p.unlink(missing_ok=True)
    return True


def known(out: Path) -> dict[str, tuple[str | None, str | None, str | None]]:
    """source -> (manifest sha256, fingerprint, auditor version) of what the index holds."""
    df = load_index(out, list(KEY_COLUMNS))
    return {s: (m, f, v) for s, m, f, v in df.iter_rows()}


class IndexWriter:
    """Collects rows and commits them to part files every FLUSH_EVERY records or
    FLUSH_SECONDS, whichever comes first; `close` compacts."""

    FLUSH_EVERY = 64
    FLUSH_SECONDS = 2.0

    def __init__(self, out: Path, version: str) -> None:
        self.out = Path(out)
        self.version = version
        # Unique per writer, so audit ids of two audits never collide.
        self.session = f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:12]}"
        (self.out / PARTS).mkdir(parents=True, exist_ok=True)
        self.seq = len(_parts(self.out)[0])
        self.n = 0
        self.rows: list[dict[str, Any]] = []
        self.findings: list[dict[str, Any]] = []
        self.last_flush = time.monotonic()

    def _audit_id(self) -> str:
        self.n += 1
        return f"{self.session}-{self.n}"

    def add(self, item: RunRecord | SourceProblem) -> None:
        aid = self._audit_id()
        if isinstance(item, RunRecord):
            self.rows.append(record_row(item, self.version, aid))
            self.findings += finding_rows(aid, item.source, item.findings, item.skipped)
        else:
            self.rows.append(problem_row(item, self.version, aid))
            self.findings += finding_rows(aid, item.source, item.findings)
        if (
            len(self.rows) >= self.FLUSH_EVERY
            or time.monotonic() - self.last_flush >= self.FLUSH_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        """Commit the rows collected so far: findings part first, index part last."""
        self.last_flush = time.monotonic()
        if not self.rows:
            return
        # Sequence numbers sort as text, and continue after an interrupted audit's parts.
        name = f"{self.seq:08d}-{self.session}.parquet"
        self.seq += 1
        parts = self.out / PARTS
        _write(
            pl.DataFrame(self.findings, schema=FINDINGS_SCHEMA, orient="row"),
            parts / f"findings-{name}",
        )
        _write(pl.DataFrame(self.rows, schema=INDEX_SCHEMA, orient="row"), parts / f"index-{name}")
        self.rows, self.findings = [], []

    def close(self) -> None:
        self.flush()
        compact(self.out)


def compact(out: Path) -> None:
    """Fold the parts into index.parquet and findings.parquet (each replaced atomically; the
    index last), then remove the parts. Safe to repeat after a crash at any point: rows are
    deduplicated by source and findings kept only for the rows kept."""
    out = Path(out)
    index_parts, finding_parts = _parts(out)
    if not index_parts and (out / INDEX).is_file():
        return
    index = load_index(out).sort("source")  # the same order whatever finished first
    keep = index["audit_id"]
    f_files = [p for p in [out / FINDINGS] if p.is_file()] + finding_parts
    tmp = out / f".{FINDINGS}.tmp-{os.getpid()}"
    if f_files:
        (
            pl.scan_parquet(f_files)
            .filter(pl.col("audit_id").is_in(keep.implode()))
            .sink_parquet(tmp)
        )
    else:
        pl.DataFrame(schema=FINDINGS_SCHEMA).write_parquet(tmp)
    os.replace(tmp, out / FINDINGS)
    _write(index, out / INDEX)
    for p in [*(out / PARTS).glob("*"), *out.glob(".*.tmp-*")]:  # and a killed run's temps
        p.unlink()
