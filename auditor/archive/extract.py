"""Extraction of a run archive (`.tar`, `.tar.gz`/`.tgz`, `.zip`) under `--out`, by this
module's own code rather than `tarfile`'s or `zipfile`'s extractors, so that every member is
checked before a byte lands:

- its name is relative, has no `..` part, no backslash and no NUL: nothing outside the root;
- links are never created: a hard link to a member already extracted becomes a copy of it,
  any other link (symbolic, or pointing out of the root) is refused;
- devices, FIFOs and other special members are refused;
- a member never overwrites another (files are created exclusively, parents are checked to be
  real folders);
- the member count, each member's size, the total size and the expansion ratio are bounded
  (`MAX_*` below) by the bytes actually written, never by the sizes the archive declares.

Each refused member is a finding on its archive and the rest is extracted; an archive past a
limit, or that cannot be read, is refused whole (`extract` says so) and the caller removes
its partial extraction.
"""

from __future__ import annotations

import os
import re
import stat
import tarfile
import zipfile
import zlib
from datetime import datetime
from pathlib import Path
from typing import IO

from auditor.archive.source_findings import (
    BAD_NAME,
    LIMIT_EXCEEDED,
    LINK_REFUSED,
    NAME_CLASH,
    PATH_OUTSIDE,
    SPECIAL_FILE,
    UNREADABLE_ARCHIVE,
    source_finding,
)
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

CHUNK = 1 << 20


class _Refused(Exception):
    """The whole archive is refused (a limit, or it cannot be read)."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


def _check_name(name: str) -> tuple[list[str] | None, Finding | None]:
    """The path parts of member NAME inside the root, or why it is refused. Empty parts and
    `.` are dropped (`./a//b` is `a/b`); an empty result is the root itself."""
    if "\x00" in name or "\\" in name:
        return None, source_finding(
            BAD_NAME,
            f"member {name!r}: a backslash or NUL in the name (never part of a run dir path)",
            name,
        )
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return None, source_finding(PATH_OUTSIDE, f"member {name!r}: an absolute path", name)
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None, source_finding(
            PATH_OUTSIDE,
            f"member {name!r}: a `..` part would write outside the extraction root",
            name,
        )
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
            raise _Refused(
                source_finding(
                    LIMIT_EXCEEDED,
                    f"more than {MAX_MEMBERS:,} members: refused as a possible decompression bomb",
                    limit="MAX_MEMBERS",
                    observed=self.members,
                )
            )

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
                self.findings.append(
                    source_finding(
                        NAME_CLASH,
                        f"member {name!r}: {cur.relative_to(self.root)} is already a "
                        "file, not a folder",
                        name,
                    )
                )
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
            self.findings.append(
                source_finding(
                    NAME_CLASH,
                    f"member {name!r}: a second member of that name (never overwritten)",
                    name,
                )
            )
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
            raise _Refused(
                source_finding(
                    LIMIT_EXCEEDED,
                    f"member {name!r} expands past {MAX_MEMBER_BYTES:,} bytes: "
                    "refused as a possible decompression bomb",
                    name,
                    limit="MAX_MEMBER_BYTES",
                )
            )
        if self.total > MAX_TOTAL_BYTES:
            raise _Refused(
                source_finding(
                    LIMIT_EXCEEDED,
                    f"the archive expands past {MAX_TOTAL_BYTES:,} bytes: refused "
                    "as a possible decompression bomb",
                    name,
                    limit="MAX_TOTAL_BYTES",
                )
            )
        if self.total > RATIO_FLOOR_BYTES and self.total > MAX_RATIO * self.archive_bytes:
            raise _Refused(
                source_finding(
                    LIMIT_EXCEEDED,
                    f"the archive expands more than {MAX_RATIO}x its size: refused "
                    "as a possible decompression bomb",
                    name,
                    limit="MAX_RATIO",
                )
            )

    def copy_of(self, parts: list[str], name: str, link_parts: list[str], mtime: float) -> None:
        """A hard link to an earlier member: a copy of that member's bytes (no shared inode,
        so nothing written later can reach through it)."""
        src = self.root.joinpath(*link_parts)
        try:
            st = os.lstat(src)
        except FileNotFoundError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode):
            self.findings.append(
                source_finding(
                    LINK_REFUSED,
                    f"member {name!r}: a hard link to {'/'.join(link_parts)!r}, "
                    "which is no file extracted before it",
                    name,
                )
            )
            return
        with open(src, "rb") as fh:
            self.file(parts, name, fh, mtime)


def extract(path: Path, dest: Path) -> tuple[list[Finding], str | None]:
    """Extract archive PATH into DEST: (findings, why the whole archive is refused or None)."""
    ex = _Extractor(dest, path.stat().st_size)
    try:
        if path.name.lower().endswith(".zip"):
            _extract_zip(path, ex)
        else:
            _extract_tar(path, ex)
    except _Refused as refused:
        return [*ex.findings, refused.finding], refused.finding.message
    except (
        tarfile.TarError,
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        zlib.error,
        OSError,
        ValueError,
        NotImplementedError,
        RuntimeError,
    ) as exc:
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
                    ex.findings.append(
                        source_finding(
                            LINK_REFUSED,
                            f"member {m.name!r}: a hard link to {m.linkname!r}, "
                            "outside the extraction root",
                            m.name,
                            target=m.linkname,
                        )
                    )
                    continue
                ex.copy_of(parts, m.name, link_parts, float(m.mtime))
            elif m.issym():
                ex.findings.append(_symlink_finding(m.name, m.linkname, parts))
            else:
                ex.findings.append(
                    source_finding(
                        SPECIAL_FILE,
                        f"member {m.name!r}: a device, FIFO or other special file "
                        "(a run dir holds plain files)",
                        m.name,
                    )
                )


def _symlink_finding(name: str, target: str, parts: list[str]) -> Finding:
    """Symbolic links are never created: one pointing out of the root could let a later
    member be written anywhere, and a run dir holds plain files anyway."""
    inside = _resolves_inside(parts[:-1], target)
    where = "inside the archive" if inside else "out of the extraction root"
    return source_finding(
        LINK_REFUSED,
        f"member {name!r}: a symbolic link to {target!r} ({where}); links are not extracted",
        name,
        target=target,
    )


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
            raise _Refused(
                source_finding(
                    LIMIT_EXCEEDED,
                    f"{len(infos):,} members, more than {MAX_MEMBERS:,}: refused "
                    "as a possible decompression bomb",
                    limit="MAX_MEMBERS",
                    observed=len(infos),
                )
            )
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
                ex.findings.append(
                    source_finding(
                        SPECIAL_FILE,
                        f"member {info.filename!r}: a device, FIFO or other special "
                        "file (a run dir holds plain files)",
                        info.filename,
                    )
                )
            elif info.is_dir():
                if parts:
                    ex.folder(parts, info.filename)
            elif parts:
                mtime = datetime(*info.date_time).timestamp()
                with zf.open(info) as src:
                    ex.file(parts, info.filename, src, mtime)
