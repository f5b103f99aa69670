"""`audit archive --format text`: what an archive audit did, for a terminal."""

from __future__ import annotations

from typing import Any

from auditor.output import Format


def render(outcome: Any, *, color: bool = False) -> str:
    o = outcome.to_json()
    verdicts = ", ".join(f"{n:,} {v}" for v, n in outcome.verdicts) or "empty"
    per = (
        f", {o['per_run_seconds'] * 1000:.0f} ms per run"
        if o["per_run_seconds"] is not None
        else ""
    )
    lines = [
        f"{o['found']:,} found: {o['audited']:,} audited now ({o['seconds']:.1f} s over "
        f"{o['jobs']} {o['executor']} worker(s){per}), {o['already_in_index']:,} already in "
        "the index",
        f"index: {verdicts}",
        f"  {o['index']}",
        f"  {o['findings']}",
    ]
    if outcome.failed:
        lines.append(
            f"{outcome.failed:,} could not be audited (one line each above; reasons in the index)"
        )
    return "\n".join(lines) + "\n"


FORMAT = Format("text", "a summary for a terminal", render)
