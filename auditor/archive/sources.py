"""What `audit archive` audits: the runs its SOURCES hold, found without trusting them.

A SOURCE is a run directory, a folder holding runs (a run is a folder with a `manifest.json`,
or one of the files only one protocol's runs hold), or a `.tar`, `.tar.gz`/`.tgz` or `.zip`
archive, found as given or inside a folder. Archives are extracted under `--out` only
(`<out>/extracted/<name>-<key>/`) by `auditor.archive.extract`, which checks every member
before a byte lands; an extraction that finished is marked, so a rerun reuses it. Nothing
here raises on a bad source: what cannot be audited is a `SourceProblem`, kept as data.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from auditor.archive.extract import extract
from auditor.archive.source_findings import (
    LINK_NOT_FOLLOWED,
    NOT_A_RUN,
    UNREADABLE_ARCHIVE,
    source_finding,
)
from auditor.model import Finding

ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".zip")
MANIFEST = "manifest.json"
EXTRACTED = "extracted"
MARKER = ".extracted.json"
"""Written last in an extraction folder: the extraction is complete, with its refusals, so
a rerun reuses it instead of extracting again."""


@dataclass(frozen=True)
class Job:
    """One run directory to audit."""

    source: str
    """What the index calls it: the absolute path of the run dir, or
    `<archive>!/<path inside the archive>` for a run extracted from an archive."""
    run_dir: str
    """Where it is on disk (inside `<out>/extracted/` for an archive's run)."""


@dataclass(frozen=True)
class SourceProblem:
    """A source, or part of one, that holds no auditable run, or members refused for
    safety; it gets an index row and its findings, never a crash."""

    source: str
    reason: str
    """One line: why."""
    findings: tuple[Finding, ...]
    refused: bool
    """True for a safety refusal, False for a source that holds nothing to audit."""
    fingerprint: str = ""
    """The archive's stat key, so a rerun knows it saw this very file."""


Item = Job | SourceProblem


def is_archive(path: Path) -> bool:
    return path.name.lower().endswith(ARCHIVE_SUFFIXES)


def run_signature_files() -> tuple[str, ...]:
    """Files that make a folder a run: the manifest, and each protocol's signature files."""
    from auditor import protocols

    return (MANIFEST, *(f for p in protocols.all_protocols() for f in p.signature_files))


def discover(sources: Iterable[Path | str], out_dir: Path) -> Iterator[Item]:
    """Every run of SOURCES, in order, and every problem with them; archives are extracted
    under OUT_DIR (which is never walked as a source)."""
    out = Path(os.path.abspath(out_dir))
    marks = run_signature_files()
    for given in sources:
        path = Path(os.path.abspath(given))
        if path.is_symlink():
            yield _link_problem(str(path))
        elif path.is_dir():
            yield from _walk(path, path, out, marks)
        elif path.is_file() and is_archive(path):
            yield from _archive(path, out, marks)
        elif path.exists():
            yield _not_a_run(str(path), "neither a folder nor a .tar, .tar.gz or .zip archive")
        else:
            yield _not_a_run(str(path), "no such file or folder")


def _link_problem(source: str) -> SourceProblem:
    why = "a symbolic link: not followed (its target may be anywhere); give the target itself"
    return SourceProblem(source, why, (source_finding(LINK_NOT_FOLLOWED, why),), refused=False)


def _not_a_run(source: str, why: str) -> SourceProblem:
    return SourceProblem(source, why, (source_finding(NOT_A_RUN, why),), refused=False)


def _walk(
    top: Path, label_root: Path, out: Path, marks: tuple[str, ...], label_prefix: str | None = None
) -> Iterator[Item]:
    """Runs under TOP (a run's own folders are not searched further); archives found on the
    way are extracted and searched too, and OUT is never entered. Labels are paths, or
    `<archive>!/<inner>` inside an extraction (where archives are not expanded again).

    One `scandir` per folder, in sorted order (as `os.walk` top-down would go), with the
    entries' own types: an archive of 10,000 runs is listed without a `stat` per run."""
    found = False
    out_s = str(out)
    out_under = out_s.rstrip(os.sep) + os.sep

    def walk(dirpath: str) -> Iterator[Item]:
        nonlocal found
        if label_prefix is None and (dirpath == out_s or dirpath.startswith(out_under)):
            return
        try:
            with os.scandir(dirpath) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        dirs: list[os.DirEntry[str]] = []
        files: list[os.DirEntry[str]] = []
        for e in entries:
            try:
                (dirs if e.is_dir() else files).append(e)  # links followed, as os.walk does
            except OSError:
                files.append(e)
        names = {e.name for e in files}
        if any(m in names for m in marks):
            found = True
            yield Job(source=_label(Path(dirpath), label_root, label_prefix), run_dir=dirpath)
            return  # a run's own folders are its evidence, not other runs
        if label_prefix is None:  # inside an extraction: no archive, no link
            for e in files:
                if is_archive(Path(e.name)):
                    found = True
                    if e.is_symlink():
                        yield _link_problem(e.path)
                    else:
                        yield from _archive(Path(e.path), out, marks)
            for e in dirs:
                if e.is_symlink():
                    found = True
                    yield _link_problem(e.path)
        for e in dirs:
            if not e.is_symlink():
                yield from walk(e.path)

    yield from walk(str(top))
    if not found:
        where = label_prefix or str(top)
        yield _not_a_run(
            where,
            f"no run found (no folder holds {MANIFEST} or "
            f"{', '.join(marks[1:]) or 'a protocol signature file'})",
        )


def _label(path: Path, root: Path, prefix: str | None) -> str:
    if prefix is None:
        return str(path)
    rel = path.relative_to(root).as_posix()
    return prefix if rel == "." else f"{prefix}{rel}"


def archive_key(path: Path) -> str:
    """A stat key of an archive file (its path, size and modification time): the same key
    means the same extraction can be reused."""
    st = path.stat()
    text = f"{path}\0{st.st_size}\0{st.st_mtime_ns}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _archive(path: Path, out: Path, marks: tuple[str, ...]) -> Iterator[Item]:
    """Extract PATH once under OUT (reused while the archive is unchanged), then its runs."""
    key = archive_key(path)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", path.name)[:80]
    dest = out / EXTRACTED / f"{stem}-{key[:16]}"
    marker = dest / MARKER
    findings: list[Finding]
    whole: str | None
    if marker.is_file() and not marker.is_symlink():
        done = json.loads(marker.read_text(encoding="utf-8"))
        findings = [Finding(**f) for f in done["findings"]]
        whole = done["refused_whole"]
    else:
        if dest.exists():
            shutil.rmtree(dest)  # an extraction that did not finish
        _drop_stale(path, dest)
        dest.mkdir(parents=True)
        findings, whole = extract(path, dest)
        if whole is not None:
            shutil.rmtree(dest)
            dest.mkdir(parents=True)
        record = {
            "archive": str(path),
            "key": key,
            "refused_whole": whole,
            "findings": [_finding_fields(f) for f in findings],
        }
        tmp = dest / f"{MARKER}.tmp"
        tmp.write_text(json.dumps(record), encoding="utf-8")
        os.replace(tmp, marker)
    label = str(path)
    if whole is not None:  # refused for safety, or unreadable (then not a refusal)
        unreadable = findings[-1].code == UNREADABLE_ARCHIVE
        yield SourceProblem(label, whole, tuple(findings), refused=not unreadable, fingerprint=key)
        return
    if findings:
        n = len(findings)
        yield SourceProblem(
            label,
            f"{n} member(s) refused; the first: {findings[0].message}",
            tuple(findings),
            refused=True,
            fingerprint=key,
        )
    yield from _walk(dest, dest, out, marks, label_prefix=f"{label}!/")


def _drop_stale(path: Path, dest: Path) -> None:
    """Remove the extractions of an earlier version of the archive at PATH."""
    for other in dest.parent.glob(f"{dest.name.rsplit('-', 1)[0]}-*"):
        try:
            done = json.loads((other / MARKER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if other != dest and done.get("archive") == str(path):
            shutil.rmtree(other)


def _finding_fields(f: Finding) -> dict:
    return {
        "code": f.code,
        "severity": f.severity,
        "protocol_ref": f.protocol_ref,
        "title": f.title,
        "message": f.message,
        "artifact": f.artifact,
        "evidence": f.evidence,
    }
