"""What every timed record of both protocols carries: the UTC time it was taken (`now_iso`,
protocol A's timeline and both manifests and environments, protocol B's declaration) and,
when something failed, its incident (`incident_of`: protocol A's pass and warm-up entries,
protocol B's trial and warm-up errors), so a failure is worded the same way in either run."""

from __future__ import annotations

import traceback
from datetime import UTC, datetime

import torch


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def incident_of(exc: BaseException) -> dict[str, str]:
    """The timeline's incident for an exception: `oom` for out-of-memory, else `error`."""
    oom = isinstance(exc, torch.OutOfMemoryError | MemoryError)
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return {
        "kind": "oom" if oom else "error",
        "message": message[:500],
        "exception": "".join(traceback.format_exception_only(type(exc), exc)).strip()[:2000],
    }
