"""`audit archive`'s core: find the runs of the sources, skip those the index already holds,
audit the rest over an executor and stream every result into the index. Returns an
`ArchiveOutcome`; never prints (progress goes through a `Progress`) and never exits."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from auditor.archive import index
from auditor.archive.progress import Progress
from auditor.archive.source_findings import INTERNAL, source_finding
from auditor.archive.sources import Job, SourceProblem, discover
from auditor.archive.worker import RunRecord, fingerprint, manifest_sha256
from auditor.errors import AuditorError

EXECUTORS = ("local", "ray")
FAILURES_KEPT = 100
"""Failures listed in the outcome (all are in the index and printed as they happen)."""


@dataclass(frozen=True)
class ArchiveOutcome:
    """What one `audit archive` did, and what the index now holds."""

    out_dir: str
    executor: str
    jobs: int
    found: int
    """Runs and problem sources found in the sources."""
    audited: int
    """Audited this time."""
    already: int
    """Already in the index with the same manifest, files and auditor version: not audited."""
    failures: tuple[tuple[str, str], ...]
    """(source, why) of what could not be audited this time (the first `FAILURES_KEPT`)."""
    failed: int
    verdicts: tuple[tuple[str, int], ...]
    """Rows of the whole index per verdict."""
    seconds: float
    """Wall time of the audits (discovery and compaction excluded)."""
    total_seconds: float
    started_at: datetime
    finished_at: datetime
    """When the command started and ended (UTC)."""

    @property
    def per_run_seconds(self) -> float | None:
        return self.seconds / self.audited if self.audited else None

    def to_json(self) -> dict:
        """schemas/archive-outcome.schema.json."""
        return {
            "schema_version": "2",
            "out_dir": self.out_dir,
            "index": str(Path(self.out_dir) / index.INDEX),
            "findings": str(Path(self.out_dir) / index.FINDINGS),
            "executor": self.executor,
            "jobs": self.jobs,
            "found": self.found,
            "audited": self.audited,
            "already_in_index": self.already,
            "failed": self.failed,
            "failures": [{"source": s, "why": w} for s, w in self.failures],
            "verdicts": dict(self.verdicts),
            "seconds": round(self.seconds, 3),
            "per_run_seconds": (
                round(self.per_run_seconds, 4) if self.per_run_seconds is not None else None
            ),
            "total_seconds": round(self.total_seconds, 3),
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
        }


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def other_version(record: RunRecord, version: str) -> RunRecord:
    """RECORD, audited by a worker whose auditor is not VERSION (a cluster node with other
    code installed), as a failure: its verdict is not this auditor's, so it is not indexed
    as one; its empty fingerprint makes the next audit try it again."""
    why = (
        f"audited by auditor {record.auditor_version} on its worker, not this audit's "
        f"{version}: install the same auditor on every node"
    )
    return dataclasses.replace(
        record,
        fingerprint="",
        summary=None,
        failure=why,
        reason=why,
        findings=(source_finding(INTERNAL, why),),
        skipped=(),
        content_sha256=None,
        matches_manifest=None,
    )


class Executor(Protocol):
    """What audits the runs: `local.LocalExecutor`, `ray_executor.RayExecutor`."""

    @property
    def name(self) -> str: ...

    @property
    def jobs(self) -> int | None: ...

    def map(self, jobs: Iterable[Job]) -> Iterator[RunRecord]:
        """A record per job, each once, in the order they finish."""
        ...


def make_executor(name: str, jobs: int | None, address: str | None, ship: bool = False) -> Executor:
    if name == "local":
        if address is not None:
            raise AuditorError("--address goes with --executor ray")
        if ship:
            raise AuditorError("--ship goes with --executor ray (local workers see the runs)")
        from auditor.archive.local import LocalExecutor

        return LocalExecutor(jobs)
    if name == "ray":
        from auditor.archive.ray_executor import RayExecutor

        return RayExecutor(address, jobs, ship=ship)
    raise AuditorError(f"unknown executor {name!r} (one of {', '.join(EXECUTORS)})")


def _unchanged(job: Job, row: tuple[str | None, str | None, str | None], version: str) -> bool:
    sha, fp, ver = row
    return ver == version and sha == manifest_sha256(job.run_dir) and fp == fingerprint(job.run_dir)


CHECK_THREADS = 4
"""Threads that stat the runs the index already holds: the walk waits on the file system
(a network one, for an archive on shared storage) and releases the GIL meanwhile."""


def _unchanged_all(jobs: list[Job], seen: dict, version: str) -> Iterator[bool]:
    """`_unchanged` of each of JOBS, in order, over a few threads when there are many (in
    chunks: a future per run would cost as much as the check)."""

    def check(chunk: list[Job]) -> list[bool]:
        return [_unchanged(j, seen[j.source], version) for j in chunk]

    size = 64
    if len(jobs) <= size:
        yield from check(jobs)
        return
    from concurrent.futures import ThreadPoolExecutor

    chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    with ThreadPoolExecutor(CHECK_THREADS, thread_name_prefix="unchanged") as pool:
        for done in pool.map(check, chunks):
            yield from done


def audit_archive(
    sources: Iterable[Path | str],
    out_dir: Path,
    *,
    jobs: int | None = None,
    executor: str | Executor = "local",
    address: str | None = None,
    force: bool = False,
    ship: bool = False,
    progress: Progress | None = None,
    on_record: Callable[[RunRecord], None] | None = None,
) -> ArchiveOutcome:
    """Audit every run of SOURCES into OUT_DIR's index. ON_RECORD is called after each run
    is added (an exception it raises stops the audit after committing what was done, as an
    interrupt does). SHIP (Ray only) sends each run's files with its task, for workers that
    do not see the sources."""
    t_start = time.perf_counter()
    started_at = datetime.now(UTC)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise AuditorError(f"{out}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    runner = make_executor(executor, jobs, address, ship) if isinstance(executor, str) else executor
    progress = progress or Progress(quiet=True)
    version = index.auditor_version()
    index.drop_if_outdated(out)
    seen = {} if force else index.known(out)
    writer = index.IndexWriter(out, version)
    found = already = audited = failed = 0
    failures: list[tuple[str, str]] = []

    def fail(source: str, why: str) -> None:
        nonlocal failed
        failed += 1
        if len(failures) < FAILURES_KEPT:
            failures.append((source, why))
        progress.failure(source, why)

    todo: list[Job] = []
    known_jobs: list[Job] = []
    for item in discover(sources, out):
        found += 1
        if isinstance(item, SourceProblem):
            row = seen.get(item.source)
            if row is not None and row[1:] == (item.fingerprint, version):
                already += 1
                continue
            writer.add(item)
            fail(item.source, item.reason)
        elif item.source in seen:
            known_jobs.append(item)
        else:
            todo.append(item)
    for job, same in zip(known_jobs, _unchanged_all(known_jobs, seen, version), strict=True):
        if same:
            already += 1
        else:
            todo.append(job)
    progress.set_total(len(todo) + already, already)
    t0 = time.perf_counter()
    try:
        for record in runner.map(todo):
            if record.auditor_version not in (None, version):
                record = other_version(record, version)
            writer.add(record)
            audited += 1
            progress.advance()
            if record.summary is None:
                fail(record.source, record.reason or "not audited")
            if on_record is not None:
                on_record(record)
    except BaseException:
        writer.flush()  # what was audited stays committed: a rerun resumes after it
        progress.close()
        raise
    seconds = time.perf_counter() - t0
    writer.close()
    progress.close()
    verdicts = index.load_index(out, ["verdict"])["verdict"].value_counts(sort=True)
    return ArchiveOutcome(
        out_dir=str(out),
        executor=runner.name,
        jobs=runner.jobs or 0,
        found=found,
        audited=audited,
        already=already,
        failures=tuple(failures),
        failed=failed,
        verdicts=tuple((v, int(n)) for v, n in verdicts.iter_rows()),
        seconds=seconds,
        total_seconds=time.perf_counter() - t_start,
        started_at=started_at,
        finished_at=datetime.now(UTC),
    )
