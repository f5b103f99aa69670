"""The archive's frames: the columns of `index.parquet` (one row per run, or per source that
holds none) and `findings.parquet` (one row per finding or skipped rule), as polars schemas
(`INDEX_SCHEMA`, `FINDINGS_SCHEMA`; also schemas/archive-*.frame.json, documented in
docs/archive.md), and how a row of each is made from what a worker returns (a `RunRecord`, a
`SourceProblem`, their findings). Money is integer minor units with its currency, times are
timestamps with a zone. Writing and reading them is `auditor.archive.index`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import polars as pl

from auditor.archive.sources import SourceProblem
from auditor.archive.worker import RunRecord
from auditor.model import Finding, RunIdentity, Skipped, workload_key

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
