"""Small file helpers shared across the auditor: atomic writes and SHA-256 of files."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def current_umask() -> int:
    """The process's umask, read without changing it where the OS says it (Linux 4.7+:
    `/proc/self/status`), else by the set-and-restore `os.umask` pair."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write `data` to `path` through a temp file in the same directory and a rename, so a
    reader never sees a half-written file; `mode` (e.g. 0o600) is set before any byte lands.
    Without `mode` the file gets what `open()` would give it, 0o666 less the umask (a CI
    uploader running as another user reads what it could read from a plain write); the
    temp file's own 0o600 (`mkstemp`) is not kept. No library does this: the standard
    library has no atomic write, and the `atomicwrites` package is archived and keeps the
    temp file's 0o600 the same way."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask() if mode is None else mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def list_files(root: Path) -> list[str]:
    """Every regular file under `root`, as sorted `/`-separated relative paths. Symlinks and
    other non-regular entries are listed too (so verify can refuse them), never followed."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath)
        for name in filenames + [d for d in dirnames if (base / d).is_symlink()]:
            out.append((base / name).relative_to(root).as_posix())
    return sorted(out)
