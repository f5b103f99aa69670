"""Walk a run directory once: the SHA-256 of every file, and the bytes of the files a
protocol will parse, each read exactly once (the bytes hashed are the bytes parsed).

Files a protocol does not parse (model weights, say) are hashed in chunks and never held in
memory. Files it parses one at a time (`streamed` prefixes: a run's millions of output lines)
are not read by the walk: `RunFiles.stream` hands them over one by one, hashing each as it is
read, so only one of them (and the next, read ahead) is in memory at a time; any the loader
does not ask for is hashed in chunks when the hashes are first read. Reading and hashing run
on a few threads (both release the GIL). Nothing here raises on a bad entry: a symbolic link,
an unreadable file or a name that is not UTF-8 becomes a fault, and the walk goes on."""

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


class RunFiles:
    """Every file of a run dir: its hash, and its bytes when it may be parsed."""

    def __init__(self, root: Path, digests: dict[str, str], data: Mapping[str, bytes],
                 faults: tuple[Fault, ...], streamed: Mapping[str, Path] | None = None
                 ) -> None:
        self.root = root
        self._digests = digests
        self.data = data
        """Relative path -> bytes, for the files kept for parsing."""
        self.faults = faults
        """Entries that are not plain readable files with UTF-8 names."""
        self._streamed = dict(streamed or {})
        self._pending = set(self._streamed)

    @property
    def hashes(self) -> Mapping[str, str]:
        """Relative `/`-separated path -> SHA-256 hex of every regular file (a streamed file
        not read yet is hashed now; one that cannot be read has an empty digest)."""
        for rel in sorted(self._pending):
            try:
                self._digests[rel] = sha256_file(self._streamed[rel])
            except OSError:
                self._digests[rel] = ""
        self._pending.clear()
        return MappingProxyType(self._digests)

    def paths(self, prefix: str = "") -> list[str]:
        """Sorted paths of the kept and streamed files under PREFIX."""
        return sorted(p for p in (*self.data, *self._streamed) if p.startswith(prefix))

    def is_streamed(self, rel: str) -> bool:
        return rel in self._streamed

    def _read(self, rel: str) -> tuple[bytes | None, str | None]:
        try:
            blob = self._streamed[rel].read_bytes()
        except OSError as exc:
            self._digests[rel] = ""
            self._pending.discard(rel)
            return None, f"cannot read the file: {exc.strerror or exc}"
        self._digests[rel] = hashlib.sha256(blob).hexdigest()
        self._pending.discard(rel)
        return blob, None

    def stream(self, rels: list[str]) -> Iterator[tuple[str, bytes | None, str | None]]:
        """(path, bytes, None) of each streamed file of RELS in order, or (path, None, why)
        when it cannot be read; each is hashed as read (the bytes hashed are the bytes
        parsed), and the next one is read ahead on a thread while the caller parses."""
        if not rels:
            return
        with ThreadPoolExecutor(max_workers=1) as pool:
            ahead = pool.submit(self._read, rels[0])
            for i, rel in enumerate(rels):
                blob, why = ahead.result()
                if i + 1 < len(rels):
                    ahead = pool.submit(self._read, rels[i + 1])
                yield rel, blob, why
                del blob


def scan(root: Path, parsed_prefixes: tuple[str, ...] = (),
         streamed_prefixes: tuple[str, ...] = ()) -> RunFiles:
    """Hash every file under ROOT; keep the bytes of those under PARSED_PREFIXES (and of any
    small file); leave those under STREAMED_PREFIXES to `RunFiles.stream`."""
    files: list[tuple[str, Path]] = []
    faults: list[Fault] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
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
    streamed = {rel: p for rel, p in files if streamed_prefixes and rel.startswith(
        streamed_prefixes)}
    files = [(rel, p) for rel, p in files if rel not in streamed]

    def read_one(item: tuple[str, Path]) -> tuple[bytes | None, str, str | None]:
        rel, p = item
        try:
            if rel.startswith(parsed_prefixes) or p.stat().st_size <= KEEP_SMALL_BYTES:
                b = p.read_bytes()
                return b, hashlib.sha256(b).hexdigest(), None
            return None, sha256_file(p), None  # large, not parsed: hashed in chunks
        except OSError as exc:
            return None, "", exc.strerror or str(exc)

    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        read = list(pool.map(read_one, files))
    hashes: dict[str, str] = {}
    data: dict[str, bytes] = {}
    for (rel, _), (blob, digest, error) in zip(files, read, strict=True):
        if error is not None:
            faults.append(Fault(rel, f"cannot read the file: {error}", kind="format"))
            continue
        if blob is not None:
            data[rel] = blob
        hashes[rel] = digest
    return RunFiles(Path(root), hashes, MappingProxyType(data), tuple(faults), streamed)
