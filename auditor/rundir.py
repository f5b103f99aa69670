"""Walk a run directory once: the SHA-256 of every file, and the bytes of the files a
protocol will parse, each read exactly once (the bytes hashed are the bytes parsed).

Files a protocol does not parse (model weights, say) are hashed in chunks and never held in
memory. Memory stays bounded whatever the run holds: a file the protocol would parse but
larger than `MAX_PARSED_BYTES` is hashed in chunks, not kept, and reported (`limit`), and a
file larger than `MAX_HASHED_BYTES` (a sparse file can claim any size) is not read at all
and reported. Reading and hashing run on a few threads (both release the GIL). Nothing here
raises on a bad entry: a symbolic link, an unreadable file or directory, or a name that is
not UTF-8 becomes a fault, and the walk goes on."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
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
UNHASHED = ""
"""The digest recorded for a file too large to hash (its fault says why)."""


@dataclass(frozen=True)
class RunFiles:
    """Every file of a run dir: its hash, and its bytes when it may be parsed."""

    root: Path
    hashes: Mapping[str, str]
    """Relative `/`-separated path -> SHA-256 hex of every regular file (`UNHASHED`, empty,
    for a file too large to hash: its fault says so)."""
    data: Mapping[str, bytes]
    """Relative path -> bytes, for the files kept for parsing."""
    faults: tuple[Fault, ...]
    """Entries that are not plain readable files with UTF-8 names."""

    def paths(self, prefix: str = "") -> list[str]:
        """Sorted paths of the kept files under PREFIX."""
        return sorted(p for p in self.data if p.startswith(prefix))


def scan(root: Path, parsed_prefixes: tuple[str, ...] = ()) -> RunFiles:
    """Hash every file under ROOT; keep the bytes of those under PARSED_PREFIXES (and of any
    small file)."""
    files: list[tuple[str, Path]] = []
    faults: list[Fault] = []

    def unreadable_dir(exc: OSError) -> None:
        rel = Path(exc.filename).relative_to(root).as_posix() if exc.filename else "."
        shown = os.fsencode(rel).decode("utf-8", errors="backslashreplace")
        faults.append(Fault(shown, f"cannot list the directory: {exc.strerror or exc}",
                            kind="format"))

    for dirpath, dirnames, filenames in os.walk(root, followlinks=False,
                                                onerror=unreadable_dir):
        base = Path(dirpath)
        dirnames.sort()
        for name in sorted(filenames) + [d for d in dirnames if (base / d).is_symlink()]:
            p = base / name
            rel = p.relative_to(root).as_posix()
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:
                shown = os.fsencode(rel).decode("utf-8", errors="backslashreplace")
                faults.append(Fault(shown, "the file name is not valid UTF-8: run dir names "
                                    "are UTF-8 text", kind="encoding"))
                continue
            if p.is_symlink():
                faults.append(Fault(rel, "a symbolic link: run dir files must be plain files",
                                    kind="format"))
            elif p.is_file():
                files.append((rel, p))
            else:
                faults.append(Fault(rel, "not a regular file (a device, socket or pipe)",
                                    kind="format"))
    files.sort()

    def read_one(item: tuple[str, Path]) -> tuple[bytes | None, str, Fault | None]:
        rel, p = item
        try:
            size = p.stat().st_size
            if size > MAX_HASHED_BYTES:
                return None, UNHASHED, Fault(
                    rel, f"the file claims {size:,} bytes, more than the {MAX_HASHED_BYTES:,} "
                    "the auditor hashes: it is neither read nor verified", kind="limit",
                    value=str(size))
            parsed = rel.startswith(parsed_prefixes)
            if parsed and size > MAX_PARSED_BYTES:
                return None, sha256_file(p), Fault(
                    rel, f"the file is {size:,} bytes; the auditor parses an artifact up to "
                    f"{MAX_PARSED_BYTES:,} bytes (hashed, not parsed)", kind="limit",
                    value=str(size))
            if parsed or size <= KEEP_SMALL_BYTES:
                b = p.read_bytes()
                return b, hashlib.sha256(b).hexdigest(), None
            return None, sha256_file(p), None  # large, not parsed: hashed in chunks
        except OSError as exc:
            return None, "", Fault(rel, f"cannot read the file: {exc.strerror or exc}",
                                   kind="format")

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
    return RunFiles(Path(root), MappingProxyType(hashes), MappingProxyType(data),
                    tuple(faults))
