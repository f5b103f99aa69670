"""The archive's worker: audit one run dir and return only a small frozen `RunRecord`.

`audit_one` runs in a process that stays alive across runs (a local pool's worker, or a Ray
worker), so the interpreter and imports are paid once per worker, not once per run. It
reuses the engine (`auditor.engine.audit`) and the run's protocol's `summarize` hook; the
run's view (frames of every output line) is dropped before it returns, so a worker's memory
is that of the one run it audits and what crosses back to the parent is a few kilobytes.

Nothing here raises for a bad run: a folder that is no run, or a crash of the auditor, is a
record with `failure` set and a finding saying why.
"""

from __future__ import annotations

import hashlib
import os
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from auditor.archive.sources import INTERNAL, NOT_A_RUN, Job, source_finding
from auditor.model import Finding, RunSummary, Skipped

_READY = False


@dataclass(frozen=True)
class RunRecord:
    """What the index keeps of one audited run."""

    source: str
    run_dir: str
    fingerprint: str
    """`fingerprint(run_dir)` when it was audited."""
    manifest_sha256: str | None
    """SHA-256 of the run's manifest.json as audited (None without one)."""
    summary: RunSummary | None
    """The protocol's summary; None when the audit could not run (see `failure`)."""
    failure: str | None
    """Why the run could not be audited (not a run dir, the auditor crashed); None when it was."""
    findings: tuple[Finding, ...]
    skipped: tuple[Skipped, ...]
    seconds: float
    """Wall time of the audit in the worker."""
    reason: str | None = None
    """Why the run is not accepted, in one line (the summary's main reason, or the first
    missing evidence or skipped rule for an incomplete run)."""


def init(threads: int | None = None) -> None:
    """Prepare a worker once: cap polars' threads (N workers share the cores, so each gets
    its share instead of all of them) before polars is imported, then import the engine and
    every protocol's rules, so the first run pays no import."""
    global _READY
    if _READY:
        return
    if threads is not None:
        os.environ.setdefault("POLARS_MAX_THREADS", str(max(1, threads)))
    from auditor import protocols

    for p in protocols.all_protocols():
        _ = p.rules
    _READY = True


def fingerprint(run_dir: Path | str) -> str:
    """SHA-256 of every entry's relative path, size and modification time: changes when any
    file of the run is added, removed, rewritten or touched, without reading a byte."""
    root = str(run_dir)
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames
                                        if os.path.islink(os.path.join(dirpath, d))]):
            p = os.path.join(dirpath, name)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            rel = os.path.relpath(p, root)
            h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8",
                                                                       "surrogateescape"))
    return h.hexdigest()


def audit_one(job: Job, threads: int | None = None) -> RunRecord:
    """Audit JOB's run dir; never raises (a failure is a record)."""
    init(threads)
    from auditor import protocols
    from auditor.engine import audit
    from auditor.errors import AuditorError

    t0 = time.perf_counter()
    fp = fingerprint(job.run_dir)
    try:
        view, result = audit(Path(job.run_dir))
    except AuditorError as exc:
        return _failed(job, fp, t0, NOT_A_RUN, str(exc))
    except Exception as exc:  # a crash is a bug of the auditor: a record, not a lost archive
        return _failed(job, fp, t0, INTERNAL, _crash(exc))
    protocol = protocols.get(result.protocol) if result.protocol else None
    try:
        if protocol is not None and protocol.summarize is not None and view is not None:
            summary = protocol.summarize(view, result)
        else:
            summary = _bare_summary(job, result)
    except Exception as exc:
        return _failed(job, fp, t0, INTERNAL, f"the run summary crashed: {_crash(exc)}",
                       result.findings, result.skipped)
    del view  # the frames of every line go now, before the next run
    return RunRecord(source=job.source, run_dir=job.run_dir, fingerprint=fp,
                     manifest_sha256=summary.manifest_sha256, summary=summary, failure=None,
                     findings=result.findings, skipped=result.skipped,
                     seconds=time.perf_counter() - t0, reason=_reason(summary, result))


def _bare_summary(job: Job, result) -> RunSummary:
    """A protocol without a summary hook (or an unknown one): verdict and counts only."""
    first = next((f for f in result.findings if f.severity == "error"), None)
    return RunSummary(run_dir=result.run_dir, manifest_sha256=manifest_sha256(job.run_dir),
                      protocol=result.protocol,
                      experiment_id=result.experiment_id, verdict=result.verdict,
                      counts=tuple(result.counts().items()),
                      main_reason=first.message if first else None)


def manifest_sha256(run_dir: Path | str) -> str | None:
    """SHA-256 of RUN_DIR's manifest.json, None when it has none (or it is a link)."""
    path = Path(run_dir) / "manifest.json"
    if path.is_symlink() or not path.is_file():
        return None
    from auditor.fsutil import sha256_file

    try:
        return sha256_file(path)
    except OSError:
        return None


def _reason(summary: RunSummary, result) -> str | None:
    if result.verdict == "accepted":
        return None
    if summary.main_reason:
        return summary.main_reason
    missing = next((f for f in result.findings if f.missing_evidence), None)
    if missing is not None:
        return missing.message
    if result.skipped:
        s = result.skipped[0]
        return f"rule {s.code} could not run: {s.reason}"
    return None


def _failed(job: Job, fp: str, t0: float, code: str, why: str,
            findings: tuple[Finding, ...] = (), skipped: tuple[Skipped, ...] = ()) -> RunRecord:
    return RunRecord(source=job.source, run_dir=job.run_dir, fingerprint=fp,
                     manifest_sha256=manifest_sha256(job.run_dir), summary=None,
                     failure=why, findings=(*findings, source_finding(code, why)),
                     skipped=skipped, seconds=time.perf_counter() - t0, reason=why)


def _crash(exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    place = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
    return f"internal error ({type(exc).__name__}: {exc}){place}; a bug of the auditor"


def lost(job: Job, why: str) -> RunRecord:
    """The record of a run whose worker died (killed, out of memory) while auditing it."""
    return RunRecord(source=job.source, run_dir=job.run_dir, fingerprint="",
                     manifest_sha256=None, summary=None, failure=why,
                     findings=(source_finding(INTERNAL, why),), skipped=(),
                     seconds=0.0, reason=why)
