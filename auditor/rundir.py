"""Walk a run directory once: the SHA-256 of every file, and the bytes of the files a
protocol will parse, each read exactly once (the bytes hashed are the bytes parsed).

Files a protocol does not parse (model weights, say) are hashed in chunks and never held in
memory. Memory stays bounded whatever the run holds: a file the protocol would parse but
larger than `MAX_PARSED_BYTES` is hashed in chunks, not kept, and reported (`limit`), and a
file larger than `MAX_HASHED_BYTES` (a sparse file can claim any size) is not read at all
and reported. Files a protocol parses one at a time (its `streamed` prefixes: a run's
millions of output lines) are not read by the walk: `RunFiles.stream` hands them over one by
one, hashing each as it is read, so only one of them (and the next, read ahead) is in memory
at a time; one the loader never asks for is hashed in chunks when the hashes are first read.
Reading and hashing run on a few threads (both release the GIL). Nothing here raises on a
bad entry: a symbolic link, an unreadable file or directory, or a name that is not UTF-8
becomes a fault, and the walk goes on."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import MappingProxyType

from auditor.fsutil import sha256_file
from auditor.readers.base import Fault

KEEP_SMALL_BYTES = 8 << 20
"""A file outside the parsed prefixes is still kept when this small (a custom offers file)."""
MAX_PARSED_BYTES = 2 << 30
"""The largest file kept in memory for parsing (an output file of some ten million lines)."""
MAX_HASHED_BYTES = 1 << 40
"""The largest file hashed (1 TiB); a larger one, or a sparse file claiming that size, is
reported unread rather than read for hours."""
SMALL_RUN_BYTES = 32 << 20
"""Files that add up to no more than this are read and hashed on the calling thread, one after
the other: for a run of a few megabytes, starting threads costs more than they save (an
archive's worker audits thousands of such runs)."""
UNHASHED = ""
"""The digest recorded for a file too large to hash (its fault says why)."""


def _read(
    rel: str, p: Path, parsed: bool, limit: int | None = None
) -> tuple[bytes | None, str, Fault | None]:
    """(the bytes when kept for parsing, the SHA-256, a fault) of the file P at REL: a parsed
    or small file is read whole and hashed from those very bytes, any other hashed in chunks;
    the size limits (LIMIT for a parsed file, checked before it is read) and a read error are
    faults."""
    limit = MAX_PARSED_BYTES if limit is None else limit
    try:
        size = p.stat().st_size
        if size > MAX_HASHED_BYTES:
            return (
                None,
                UNHASHED,
                Fault(
                    rel,
                    f"the file claims {size:,} bytes, more than the {MAX_HASHED_BYTES:,} "
                    "the auditor hashes: it is neither read nor verified",
                    kind="limit",
                    value=str(size),
                ),
            )
        if parsed and size > limit:
            return (
                None,
                sha256_file(p),
                Fault(
                    rel,
                    f"the file is {size:,} bytes; the auditor parses such an artifact up to "
                    f"{limit:,} bytes (hashed, not parsed)",
                    kind="limit",
                    value=str(size),
                ),
            )
        if parsed or size <= KEEP_SMALL_BYTES:
            b = p.read_bytes()
            return b, hashlib.sha256(b).hexdigest(), None
        return None, sha256_file(p), None  # large, not parsed: hashed in chunks
    except OSError as exc:
        return None, "", Fault(rel, f"cannot read the file: {exc.strerror or exc}", kind="format")


def _total_size(paths: Iterator[Path]) -> int:
    """The bytes of PATHS together (one that cannot be stat'ed counts as large: the threaded
    path reads it, and reports it)."""
    total = 0
    for p in paths:
        try:
            total += p.stat().st_size
        except OSError:
            return MAX_HASHED_BYTES
        if total > SMALL_RUN_BYTES:
            break
    return total


class RunFiles:
    """Every file of a run dir: its hash, and its bytes when it may be parsed."""

    def __init__(
        self,
        root: Path,
        digests: dict[str, str],
        data: Mapping[str, bytes],
        faults: tuple[Fault, ...],
        streamed: Mapping[str, Path] | None = None,
        parse_limits: tuple[tuple[str, int], ...] = (),
    ) -> None:
        self.root = root
        self._digests = digests
        self.data = data
        """Relative path -> bytes, for the files kept for parsing."""
        self.faults = faults
        """Entries that are not plain readable files with UTF-8 names (a streamed file's
        faults come with it from `stream`)."""
        self._streamed = dict(streamed or {})
        self._pending = set(self._streamed)
        self._parse_limits = parse_limits

    @property
    def hashes(self) -> Mapping[str, str]:
        """Relative `/`-separated path -> SHA-256 hex of every regular file (`UNHASHED`,
        empty, for a file too large to hash: its fault says so). A streamed file not read
        yet is hashed now; one that cannot be read is left out, as the walk leaves it out."""
        for rel in sorted(self._pending):
            self._record(rel, _read(rel, self._streamed[rel], parsed=False))
        return MappingProxyType(self._digests)

    def paths(self, prefix: str = "") -> list[str]:
        """Sorted paths of the kept and streamed files under PREFIX."""
        return sorted(p for p in (*self.data, *self._streamed) if p.startswith(prefix))

    def is_streamed(self, rel: str) -> bool:
        return rel in self._streamed

    def _record(
        self, rel: str, read: tuple[bytes | None, str, Fault | None]
    ) -> tuple[bytes | None, Fault | None]:
        blob, digest, fault = read
        self._pending.discard(rel)
        if digest or (fault is not None and fault.kind == "limit"):
            self._digests[rel] = digest
        return blob, fault

    def stream(self, rels: list[str]) -> Iterator[tuple[str, bytes | None, Fault | None]]:
        """(path, bytes, fault) of each streamed file of RELS in order, the bytes None when
        the file cannot be read or is over a limit (the fault says which); each is hashed as
        read (the bytes hashed are the bytes parsed), the next one read ahead on a thread
        while the caller parses."""
        if not rels:
            return

        def read(rel: str) -> tuple[bytes | None, Fault | None]:
            return self._record(
                rel,
                _read(
                    rel, self._streamed[rel], parsed=True, limit=limit_for(rel, self._parse_limits)
                ),
            )

        if _total_size(self._streamed[rel] for rel in rels) <= SMALL_RUN_BYTES:
            for rel in rels:  # small files: reading ahead on a thread costs more than it saves
                blob, fault = read(rel)
                yield rel, blob, fault
                del blob
            return
        with ThreadPoolExecutor(max_workers=1) as pool:
            ahead = pool.submit(read, rels[0])
            for i, rel in enumerate(rels):
                blob, fault = ahead.result()
                if i + 1 < len(rels):
                    ahead = pool.submit(read, rels[i + 1])
                yield rel, blob, fault
                del blob


def limit_for(rel: str, limits: tuple[tuple[str, int], ...]) -> int:
    """The parse limit of REL: the first of LIMITS ((path prefix, bytes)) whose prefix starts
    it, else `MAX_PARSED_BYTES`."""
    return next((n for prefix, n in limits if rel.startswith(prefix)), MAX_PARSED_BYTES)


def scan(
    root: Path,
    parsed_prefixes: tuple[str, ...] = (),
    streamed_prefixes: tuple[str, ...] = (),
    parse_limits: tuple[tuple[str, int], ...] = (),
) -> RunFiles:
    """Hash every file under ROOT; keep the bytes of those under PARSED_PREFIXES (and of any
    small file) up to their PARSE_LIMITS (`limit_for`); leave those under STREAMED_PREFIXES
    to `RunFiles.stream`."""
    files: list[tuple[str, Path]] = []
    faults: list[Fault] = []

    def unreadable_dir(exc: OSError) -> None:
        rel = Path(exc.filename).relative_to(root).as_posix() if exc.filename else "."
        shown = os.fsencode(rel).decode("utf-8", errors="backslashreplace")
        faults.append(
            Fault(shown, f"cannot list the directory: {exc.strerror or exc}", kind="format")
        )

    for dirpath, dirnames, filenames in os.walk(root, followlinks=False, onerror=unreadable_dir):
        base = Path(dirpath)
        dirnames.sort()
        for name in sorted(filenames) + [d for d in dirnames if (base / d).is_symlink()]:
            p = base / name
            rel = p.relative_to(root).as_posix()
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:
                shown = os.fsencode(rel).decode("utf-8", errors="backslashreplace")
                faults.append(
                    Fault(
                        shown,
                        "the file name is not valid UTF-8: run dir names are UTF-8 text",
                        kind="encoding",
                    )
                )
                continue
            if p.is_symlink():
                faults.append(
                    Fault(rel, "a symbolic link: run dir files must be plain files", kind="format")
                )
            elif p.is_file():
                files.append((rel, p))
            else:
                faults.append(
                    Fault(rel, "not a regular file (a device, socket or pipe)", kind="format")
                )
    files.sort()
    streamed = {
        rel: p for rel, p in files if streamed_prefixes and rel.startswith(streamed_prefixes)
    }
    files = [(rel, p) for rel, p in files if rel not in streamed]

    def read_one(item: tuple[str, Path]) -> tuple[bytes | None, str, Fault | None]:
        rel, p = item
        return _read(rel, p, rel.startswith(parsed_prefixes), limit_for(rel, parse_limits))

    if _total_size(p for _, p in files) <= SMALL_RUN_BYTES:
        read = [read_one(item) for item in files]  # threads would cost more than they save
    else:
        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            read = list(pool.map(read_one, files))
    hashes: dict[str, str] = {}
    data: dict[str, bytes] = {}
    for (rel, _), (blob, digest, fault) in zip(files, read, strict=True):
        if fault is not None:
            faults.append(fault)
            if not digest and fault.kind != "limit":
                continue  # unreadable: not in the run as far as hashes go
        if blob is not None:
            data[rel] = blob
        hashes[rel] = digest
    return RunFiles(
        Path(root), hashes, MappingProxyType(data), tuple(faults), streamed, parse_limits
    )
