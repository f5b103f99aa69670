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
wins. The columns and how a row is made are `auditor.archive.frames` (documented in
docs/archive.md and schemas/archive-*.frame.json).
"""

from __future__ import annotations

import os
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from auditor.archive.frames import (
    FINDINGS_SCHEMA,
    INDEX_SCHEMA,
    finding_rows,
    problem_row,
    record_row,
)
from auditor.archive.sources import SourceProblem
from auditor.archive.worker import RunRecord
from auditor.archive.worker import auditor_version as auditor_version  # the rows' version

INDEX = "index.parquet"
FINDINGS = "findings.parquet"
PARTS = ".parts"

KEY_COLUMNS = ("source", "manifest_sha256", "fingerprint", "auditor_version")


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
