"""The archive's worker: audit one run dir and return only a small frozen `RunRecord`.

`audit_one` runs in a process that stays alive across runs (a local pool's worker, or a Ray
worker), so the interpreter and imports are paid once per worker, not once per run. It
reuses the engine (`auditor.engine.audit`) and the run's protocol's `summarize` hook; the
run's view (frames of every output line) is dropped before it returns, so a worker's memory
is that of the one run it audits and what crosses back to the parent is a few kilobytes.

Besides the summary, a record says what the run *is*, so that copies can be told apart
later (`audit compare`): the SHA-256 of its content (every file's path and SHA-256, as the
engine hashed them) and whether that content is exactly what its manifest lists. It also
carries the auditor version of the worker that audited it, so a cluster node running other
code cannot slip its verdicts into the index.

Nothing here raises for a bad run: a folder that is no run, or a crash of the auditor, is a
record with `failure` set and a finding saying why.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import stat
import tempfile
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from auditor.archive.source_findings import INTERNAL, NOT_A_RUN, source_finding
from auditor.archive.sources import Job
from auditor.model import AuditResult, Finding, RunSummary, Skipped

_READY = False
_VERSION: str | None = None


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
    """Why the run is not accepted, in one line: the deciding finding's code and message
    (`auditor.protocols.summary.main_reason`), or why it could not be audited."""
    content_sha256: str | None = None
    """SHA-256 over every entry of the run dir (each file's path and SHA-256, each link or
    special entry's path and kind): two sources with the same value hold the same bytes.
    None when a file could not be hashed (too large, unreadable)."""
    matches_manifest: bool | None = None
    """True when the run dir holds exactly the files its manifest lists, each with the
    listed SHA-256 (and no link or special entry); None without a readable manifest."""
    auditor_version: str | None = None
    """`auditor_version()` of the worker that audited it (None: not audited)."""


def auditor_version() -> str:
    """The package version plus a digest of the auditor's code and schemas: a rule changed
    between two commits is a new version, and the runs it could judge differently are
    audited again. Computed once per process."""
    global _VERSION
    if _VERSION is None:
        import auditor
        import schemas

        h = hashlib.sha256()
        for package in (auditor, schemas):
            assert package.__file__ is not None  # both are regular packages
            root = Path(package.__file__).parent
            for p in sorted(root.rglob("*")):
                if p.suffix in (".py", ".json") and "__pycache__" not in p.parts:
                    h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes())
        _VERSION = f"{auditor.__version__}+{h.hexdigest()[:12]}"
    return _VERSION


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
    auditor_version()
    _READY = True


def walk_stats(run_dir: Path | str) -> tuple[str, tuple[str, ...]]:
    """(fingerprint, odd entries) of RUN_DIR in one walk without reading a byte. The
    fingerprint is the SHA-256 of every entry's relative path, type, size and modification
    time: it changes when any file of the run is added, removed, rewritten or touched. Odd
    entries are `path\\0kind` of what is neither a file nor a folder (links are never
    followed)."""
    h = hashlib.sha256()
    odd: list[str] = []

    def walk(path: str, prefix: str) -> None:
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for e in entries:
            rel = prefix + e.name
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                walk(e.path, rel + "/")
                continue
            if not stat.S_ISREG(st.st_mode):
                odd.append(f"{rel}\0{'link' if stat.S_ISLNK(st.st_mode) else 'special'}")
            h.update(
                f"{rel}\0{st.st_mode:o}\0{st.st_size}\0{st.st_mtime_ns}\n".encode(
                    "utf-8", "surrogateescape"
                )
            )

    walk(os.fspath(run_dir), "")
    return h.hexdigest(), tuple(odd)


def fingerprint(run_dir: Path | str) -> str:
    """`walk_stats(run_dir)`'s fingerprint."""
    return walk_stats(run_dir)[0]


def content_sha256(files_on_disk: Mapping[str, str], odd: tuple[str, ...]) -> str | None:
    """The run's content digest from the engine's hashes (path -> SHA-256) and the walk's odd
    entries; None when a file was left unhashed (its bytes are unknown)."""
    from auditor.rundir import UNHASHED

    items = sorted(files_on_disk.items())
    if any(digest == UNHASHED for _, digest in items):
        return None
    h = hashlib.sha256()
    for rel, digest in items:
        h.update(f"{rel}\0{digest}\n".encode("utf-8", "surrogateescape"))
    for entry in sorted(odd):
        h.update(f"{entry}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def audit_one(job: Job, threads: int | None = None) -> RunRecord:
    """Audit JOB's run dir; never raises (a failure is a record)."""
    init(threads)
    from auditor import protocols
    from auditor.engine import audit
    from auditor.errors import AuditorError
    from auditor.protocols.sealed import matches_manifest
    from auditor.protocols.summary import main_reason

    t0 = time.perf_counter()
    fp, odd = walk_stats(job.run_dir)
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
        content = content_sha256(view.files_on_disk, odd) if view is not None else None
        sealed = matches_manifest(view) if view is not None else None
    except Exception as exc:
        return _failed(
            job,
            fp,
            t0,
            INTERNAL,
            f"the run summary crashed: {_crash(exc)}",
            result.findings,
            result.skipped,
        )
    del view  # the frames of every line go now, before the next run
    return RunRecord(
        source=job.source,
        run_dir=job.run_dir,
        fingerprint=fp,
        manifest_sha256=summary.manifest_sha256,
        summary=summary,
        failure=None,
        findings=result.findings,
        skipped=result.skipped,
        seconds=time.perf_counter() - t0,
        reason=main_reason(result) or summary.main_reason,
        content_sha256=content,
        matches_manifest=None if sealed is None else sealed and not odd,
        auditor_version=auditor_version(),
    )


def _bare_summary(job: Job, result: AuditResult) -> RunSummary:
    """A protocol without a summary hook (or an unknown one): verdict and counts only."""
    from auditor.protocols.summary import main_reason

    return RunSummary(
        run_dir=result.run_dir,
        manifest_sha256=manifest_sha256(job.run_dir),
        protocol=result.protocol,
        experiment_id=result.experiment_id,
        verdict=result.verdict,
        counts=tuple(result.counts().items()),
        main_reason=main_reason(result),
    )


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


def _failed(
    job: Job,
    fp: str,
    t0: float,
    code: str,
    why: str,
    findings: tuple[Finding, ...] = (),
    skipped: tuple[Skipped, ...] = (),
) -> RunRecord:
    return RunRecord(
        source=job.source,
        run_dir=job.run_dir,
        fingerprint=fp,
        manifest_sha256=manifest_sha256(job.run_dir),
        summary=None,
        failure=why,
        findings=(*findings, source_finding(code, why)),
        skipped=skipped,
        seconds=time.perf_counter() - t0,
        reason=why,
        auditor_version=auditor_version(),
    )


def _crash(exc: BaseException) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    place = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
    return f"internal error ({type(exc).__name__}: {exc}){place}; a bug of the auditor"


def lost(job: Job, why: str) -> RunRecord:
    """The record of a run whose worker died (killed, out of memory) while auditing it. Its
    empty fingerprint never matches the run's, so the next audit tries it again."""
    return RunRecord(
        source=job.source,
        run_dir=job.run_dir,
        fingerprint="",
        manifest_sha256=None,
        summary=None,
        failure=why,
        findings=(source_finding(INTERNAL, why),),
        skipped=(),
        seconds=0.0,
        reason=why,
    )


# -- a run shipped to a worker that does not see the archive's storage ---------------------


@dataclass(frozen=True)
class Shipped:
    """The entries of one run dir, sent to a worker with the task (`--ship`): each file's
    bytes, mode and modification time, each link's target, so the worker's private copy
    has the same fingerprint and the same content as the original (folders count for
    neither, so only those that hold something are recreated)."""

    files: tuple[tuple[str, bytes, int, int], ...]
    """(relative path, bytes, permission bits, mtime in ns)."""
    links: tuple[tuple[str, str], ...] = ()
    """(relative path, target) of symbolic links (recreated, never followed)."""
    refused: str | None = None
    """Why the run cannot be shipped (a special file); then it is not audited."""


def pack(run_dir: Path | str) -> Shipped:
    """RUN_DIR as a `Shipped` (read on the machine that sees the files)."""
    root = os.fspath(run_dir)
    files: list[tuple[str, bytes, int, int]] = []
    links: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, root)
        for name in sorted(
            filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        ):
            p = os.path.join(dirpath, name)
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                links.append((rel, os.readlink(p)))
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as fh:
                    files.append((rel, fh.read(), stat.S_IMODE(st.st_mode), st.st_mtime_ns))
            else:
                return Shipped(
                    (),
                    refused=f"{rel}: a special file (device, FIFO or socket) "
                    "cannot be shipped to a worker; audit this run from storage "
                    "every node sees",
                )
    return Shipped(tuple(files), tuple(links))


def audit_shipped(job: Job, shipped: Shipped, threads: int | None = None) -> RunRecord:
    """Audit a run shipped with its task: written to a private temporary folder, audited
    there, then removed; the record names the run dir the driver sees."""
    if shipped.refused is not None:
        return _failed(job, "", time.perf_counter(), NOT_A_RUN, shipped.refused)
    tmp = tempfile.mkdtemp(prefix="audit-shipped-")
    try:
        root = os.path.join(tmp, "run")
        os.mkdir(root)
        for rel, data, mode, mtime in shipped.files:
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
            os.chmod(path, mode)
            os.utime(path, ns=(mtime, mtime))
        for rel, target in shipped.links:
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.symlink(target, path)
        record = audit_one(Job(source=job.source, run_dir=root), threads)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary = (
        dataclasses.replace(record.summary, run_dir=job.run_dir)
        if record.summary is not None
        else None
    )
    return dataclasses.replace(record, run_dir=job.run_dir, summary=summary)
