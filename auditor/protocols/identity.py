"""What every protocol's run identity shares (`auditor/protocols/<p>/facts/identity.py`): a
revision as the SHA-256 of the file(s) its kind names, from the hashes `rundir.scan` already
computed (PROTOCOL.md, "a revision is the SHA-256 of the file(s) its kind names"), and the
small readings of environment records both protocols make. No protocol is named here: each
protocol says which files are of which kind."""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any


def files_of(files: Mapping[str, str | None], patterns: Iterable[str]) -> dict[str, str]:
    """The run's files (path -> SHA-256) matching any of PATTERNS (`fnmatch`, `/` is not
    special), those that could be hashed only."""
    pats = tuple(patterns)
    return {
        p: h for p, h in files.items() if h and any(fnmatch.fnmatchcase(p, pat) for pat in pats)
    }


def revision(hashes: Mapping[str, str]) -> str | None:
    """`sha256:<hex>` of one file; of several (every shard of one model, the files of one
    corpus), the SHA-256 of their `sha256sum` listing (`<hex>  <file name>` lines in name
    order, as schemas/revision-kinds.json states it), so that where the run keeps them
    does not matter; None for none."""
    if not hashes:
        return None
    if len(hashes) == 1:
        return "sha256:" + next(iter(hashes.values()))
    named = {p.rsplit("/", 1)[-1]: h for p, h in hashes.items()}
    listing = "".join(f"{h}  {name}\n" for name, h in sorted(named.items()))
    return "sha256:" + hashlib.sha256(listing.encode("utf-8")).hexdigest()


def text(value: Any) -> str | None:
    """A recorded string, or an observed record's `value` (`{"value": ..., "source": ...}`);
    None for anything else or an empty string."""
    if isinstance(value, Mapping):
        value = value.get("value")
    return value.strip() or None if isinstance(value, str) else None


def gpu_label(gpu: Any) -> str | None:
    """`name (uuid)` of a GPU record (`name` and `uuid` or `serial`), `name` without one."""
    if not isinstance(gpu, Mapping) or not text(gpu.get("name")):
        return None
    ident = text(gpu.get("uuid")) or text(gpu.get("serial"))
    return f"{text(gpu['name'])} ({ident})" if ident else text(gpu["name"])


def iso_utc(epoch_ns: int | float | None) -> str | None:
    """Epoch nanoseconds as ISO 8601 in UTC (`Z`), to the microsecond."""
    if epoch_ns is None:
        return None
    t = datetime.fromtimestamp(epoch_ns / 1e9, UTC)
    return t.isoformat(timespec="microseconds").replace("+00:00", "Z")
