"""What `audit archive` audits: the runs its SOURCES hold, found without trusting them.

A SOURCE is a run directory, a folder holding runs (a run is a folder with a `manifest.json`,
or one of the files only one protocol's runs hold), or a `.tar`, `.tar.gz`/`.tgz` or `.zip`
archive, found as given or inside a folder. Archives are extracted under `--out` only
(`<out>/extracted/<name>-<key>/`), by this module's own code rather than `tarfile`'s or
`zipfile`'s extractors, so that every member is checked before a byte lands:

- its name is relative, has no `..` part, no backslash and no NUL: nothing outside the root;
- links are never created: a hard link to a member already extracted becomes a copy of it,
  any other link (symbolic, or pointing out of the root) is refused;
- devices, FIFOs and other special members are refused;
- a member never overwrites another (files are created exclusively, parents are checked to be
  real folders);
- the member count, each member's size, the total size and the expansion ratio are bounded
  (`MAX_*` below) by the bytes actually written, never by the sizes the archive declares.

Each refused member is a finding on its archive and the rest is extracted; an archive past a
limit, or that cannot be read, is refused whole and its partial extraction removed. Nothing
here raises on a bad source: what cannot be audited is a `SourceProblem`, kept as data.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

from auditor.model import Finding

MAX_MEMBERS = 200_000
"""Members (files, folders, links) of one archive."""
MAX_MEMBER_BYTES = 16 << 30
"""Bytes one member may expand to."""
MAX_TOTAL_BYTES = 64 << 30
"""Bytes one archive may expand to, all members together."""
MAX_RATIO = 200
"""Expanded bytes per byte of archive (gzip tops out near 1,000:1 on repetitive data; real
run dirs compress 5-20:1) ..."""
RATIO_FLOOR_BYTES = 256 << 20
"""... enforced once this much has been written, so a small archive of repetitive outputs is
never refused for its ratio alone."""

ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".zip")
MANIFEST = "manifest.json"
EXTRACTED = "extracted"
MARKER = ".extracted.json"
"""Written last in an extraction folder: the extraction is complete, with its refusals, so
a rerun reuses it instead of extracting again."""
CHUNK = 1 << 20

# Codes of the findings about a source rather than about a run's evidence.
NOT_A_RUN = "R0002"
INTERNAL = "R0003"
LINK_NOT_FOLLOWED = "R0004"
PATH_OUTSIDE = "R0101"
LINK_REFUSED = "R0102"
SPECIAL_FILE = "R0103"
LIMIT_EXCEEDED = "R0104"
UNREADABLE_ARCHIVE = "R0105"
NAME_CLASH = "R0106"
BAD_NAME = "R0107"

_TITLES = {
    NOT_A_RUN: "not a run", INTERNAL: "internal error", LINK_NOT_FOLLOWED: "link not followed",
    PATH_OUTSIDE: "path outside the extraction root", LINK_REFUSED: "link refused",
    SPECIAL_FILE: "special file refused", LIMIT_EXCEEDED: "archive over a safety limit",
    UNREADABLE_ARCHIVE: "archive unreadable", NAME_CLASH: "member name clash",
    BAD_NAME: "member name refused",
}


def source_finding(code: str, message: str, member: str | None = None,
                   **evidence: object) -> Finding:
    """A finding about a source (an archive member, a folder entry), not a run's evidence."""
    return Finding(code=code, severity="error", protocol_ref="ARCHIVE", title=_TITLES[code],
                   message=message, artifact=member, evidence=dict(evidence))


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


def _walk(top: Path, label_root: Path, out: Path, marks: tuple[str, ...],
          label_prefix: str | None = None) -> Iterator[Item]:
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
        dirs, files = [], []
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
        yield _not_a_run(where, f"no run found (no folder holds {MANIFEST} or "
                         f"{', '.join(marks[1:]) or 'a protocol signature file'})")


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
        findings, whole = _extract(path, dest)
        if whole is not None:
            shutil.rmtree(dest)
            dest.mkdir(parents=True)
        record = {"archive": str(path), "key": key, "refused_whole": whole,
                  "findings": [_finding_fields(f) for f in findings]}
        tmp = dest / f"{MARKER}.tmp"
        tmp.write_text(json.dumps(record), encoding="utf-8")
        os.replace(tmp, marker)
    label = str(path)
    if whole is not None:  # refused for safety, or unreadable (then not a refusal)
        unreadable = findings[-1].code == UNREADABLE_ARCHIVE
        yield SourceProblem(label, whole, tuple(findings), refused=not unreadable,
                            fingerprint=key)
        return
    if findings:
        n = len(findings)
        yield SourceProblem(label, f"{n} member(s) refused; the first: {findings[0].message}",
                            tuple(findings), refused=True, fingerprint=key)
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
    return {"code": f.code, "severity": f.severity, "protocol_ref": f.protocol_ref,
            "title": f.title, "message": f.message, "artifact": f.artifact,
            "evidence": f.evidence}


# -- extraction ----------------------------------------------------------------------------

class _Refused(Exception):
    """The whole archive is refused (a limit, or it cannot be read)."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


def _check_name(name: str) -> tuple[list[str] | None, Finding | None]:
    """The path parts of member NAME inside the root, or why it is refused. Empty parts and
    `.` are dropped (`./a//b` is `a/b`); an empty result is the root itself."""
    if "\x00" in name or "\\" in name:
        return None, source_finding(BAD_NAME, f"member {name!r}: a backslash or NUL in the "
                                    "name (never part of a run dir path)", name)
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return None, source_finding(PATH_OUTSIDE, f"member {name!r}: an absolute path",
                                    name)
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None, source_finding(PATH_OUTSIDE, f"member {name!r}: a `..` part would "
                                    "write outside the extraction root", name)
    return parts, None


class _Extractor:
    """Writes members under ROOT, counting the bytes actually written against the limits."""

    def __init__(self, root: Path, archive_bytes: int) -> None:
        self.root = root
        self.archive_bytes = max(1, archive_bytes)
        self.members = 0
        self.total = 0
        self.findings: list[Finding] = []

    def count_member(self) -> None:
        self.members += 1
        if self.members > MAX_MEMBERS:
            raise _Refused(source_finding(
                LIMIT_EXCEEDED, f"more than {MAX_MEMBERS:,} members: refused as a possible "
                "decompression bomb", limit="MAX_MEMBERS", observed=self.members))

    def folder(self, parts: list[str], name: str) -> Path | None:
        """Create (or find) the folder PARTS, each step a real folder; None when a step is a
        file or a link."""
        cur = self.root
        for part in parts:
            cur = cur / part
            try:
                st = os.lstat(cur)
            except FileNotFoundError:
                os.mkdir(cur, 0o755)
                continue
            if not stat.S_ISDIR(st.st_mode):
                self.findings.append(source_finding(
                    NAME_CLASH, f"member {name!r}: {cur.relative_to(self.root)} is already a "
                    "file, not a folder", name))
                return None
        return cur

    def file(self, parts: list[str], name: str, src: IO[bytes], mtime: float) -> None:
        parent = self.folder(parts[:-1], name)
        if parent is None:
            return
        target = parent / parts[-1]
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except FileExistsError:
            self.findings.append(source_finding(NAME_CLASH, f"member {name!r}: a second "
                                                "member of that name (never overwritten)", name))
            return
        written = 0
        try:
            with os.fdopen(fd, "wb") as fh:
                while block := src.read(CHUNK):
                    written += len(block)
                    self.total += len(block)
                    self._limits(name, written)
                    fh.write(block)
        except BaseException:
            target.unlink(missing_ok=True)
            raise
        os.utime(target, (mtime, mtime))

    def _limits(self, name: str, written: int) -> None:
        if written > MAX_MEMBER_BYTES:
            raise _Refused(source_finding(
                LIMIT_EXCEEDED, f"member {name!r} expands past {MAX_MEMBER_BYTES:,} bytes: "
                "refused as a possible decompression bomb", name, limit="MAX_MEMBER_BYTES"))
        if self.total > MAX_TOTAL_BYTES:
            raise _Refused(source_finding(
                LIMIT_EXCEEDED, f"the archive expands past {MAX_TOTAL_BYTES:,} bytes: refused "
                "as a possible decompression bomb", name, limit="MAX_TOTAL_BYTES"))
        if self.total > RATIO_FLOOR_BYTES and self.total > MAX_RATIO * self.archive_bytes:
            raise _Refused(source_finding(
                LIMIT_EXCEEDED, f"the archive expands more than {MAX_RATIO}x its size: refused "
                "as a possible decompression bomb", name, limit="MAX_RATIO"))

    def copy_of(self, parts: list[str], name: str, link_parts: list[str], mtime: float) -> None:
        """A hard link to an earlier member: a copy of that member's bytes (no shared inode,
        so nothing written later can reach through it)."""
        src = self.root.joinpath(*link_parts)
        try:
            st = os.lstat(src)
        except FileNotFoundError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode):
            self.findings.append(source_finding(
                LINK_REFUSED, f"member {name!r}: a hard link to {'/'.join(link_parts)!r}, "
                "which is no file extracted before it", name))
            return
        with open(src, "rb") as fh:
            self.file(parts, name, fh, mtime)


def _extract(path: Path, dest: Path) -> tuple[list[Finding], str | None]:
    """Extract archive PATH into DEST: (findings, why the whole archive is refused or None)."""
    ex = _Extractor(dest, path.stat().st_size)
    try:
        if path.name.lower().endswith(".zip"):
            _extract_zip(path, ex)
        else:
            _extract_tar(path, ex)
    except _Refused as refused:
        return [*ex.findings, refused.finding], refused.finding.message
    except (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error,
            OSError, ValueError, NotImplementedError, RuntimeError) as exc:
        # A truncated or corrupt archive: what came before the damage is not trusted either.
        why = f"the archive cannot be read ({type(exc).__name__}: {exc})"
        return [*ex.findings, source_finding(UNREADABLE_ARCHIVE, why)], why
    return ex.findings, None


def _extract_tar(path: Path, ex: _Extractor) -> None:
    with tarfile.open(path, mode="r|*") as tf:  # a stream: one pass, no seeking
        for m in tf:
            ex.count_member()
            parts, bad = _check_name(m.name)
            if bad is not None:
                ex.findings.append(bad)
                continue
            assert parts is not None
            if m.isdir():
                if parts:
                    ex.folder(parts, m.name)
            elif m.isreg():
                if not parts:
                    continue
                src = tf.extractfile(m)
                assert src is not None
                ex.file(parts, m.name, src, float(m.mtime))
            elif m.islnk():
                link_parts, bad_link = _check_name(m.linkname)
                if bad_link is not None or not link_parts:
                    ex.findings.append(source_finding(
                        LINK_REFUSED, f"member {m.name!r}: a hard link to {m.linkname!r}, "
                        "outside the extraction root", m.name, target=m.linkname))
                    continue
                ex.copy_of(parts, m.name, link_parts, float(m.mtime))
            elif m.issym():
                ex.findings.append(_symlink_finding(m.name, m.linkname, parts))
            else:
                ex.findings.append(source_finding(
                    SPECIAL_FILE, f"member {m.name!r}: a device, FIFO or other special file "
                    "(a run dir holds plain files)", m.name))


def _symlink_finding(name: str, target: str, parts: list[str]) -> Finding:
    """Symbolic links are never created: one pointing out of the root could let a later
    member be written anywhere, and a run dir holds plain files anyway."""
    inside = _resolves_inside(parts[:-1], target)
    where = "inside the archive" if inside else "out of the extraction root"
    return source_finding(LINK_REFUSED, f"member {name!r}: a symbolic link to {target!r} "
                          f"({where}); links are not extracted", name, target=target)


def _resolves_inside(base: list[str], target: str) -> bool:
    if target.startswith("/"):
        return False
    depth = list(base)
    for p in target.split("/"):
        if p in ("", "."):
            continue
        if p == "..":
            if not depth:
                return False
            depth.pop()
        else:
            depth.append(p)
    return True


def _extract_zip(path: Path, ex: _Extractor) -> None:
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise _Refused(source_finding(
                LIMIT_EXCEEDED, f"{len(infos):,} members, more than {MAX_MEMBERS:,}: refused "
                "as a possible decompression bomb", limit="MAX_MEMBERS", observed=len(infos)))
        for info in infos:
            ex.count_member()
            parts, bad = _check_name(info.filename)
            if bad is not None:
                ex.findings.append(bad)
                continue
            assert parts is not None
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode) if info.create_system == 3 and mode else 0
            if kind == stat.S_IFLNK:
                target = zf.read(info)[:4096].decode("utf-8", "replace")
                ex.findings.append(_symlink_finding(info.filename, target, parts))
            elif kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                ex.findings.append(source_finding(
                    SPECIAL_FILE, f"member {info.filename!r}: a device, FIFO or other special "
                    "file (a run dir holds plain files)", info.filename))
            elif info.is_dir():
                if parts:
                    ex.folder(parts, info.filename)
            elif parts:
                mtime = datetime(*info.date_time).timestamp()
                with zf.open(info) as src:
                    ex.file(parts, info.filename, src, mtime)
