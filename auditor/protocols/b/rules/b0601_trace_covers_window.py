"""B0601: the power trace covers the whole inference window of every trial with an energy figure.

What it checks: for each ok trial whose row claims energy (and each policy claiming pooled
figures), every power series the auditor sums (`facts/energy.py`) spans the trial's
window: the window's start and end lie inside the readings' intervals, and an energy counter
is read within one sampling period of each edge, at least twice inside.
Reads: power/<policy_id>/trial-<n>.* (reading times and intervals of the summed series);
the window (markers, else trials.csv `started_at`/`ended_at`, local times converted with the
manifest's `local_utc_offset`); trials.csv energy cells.
Why it matters: B6: "power is sampled over the 1,000-inference region"; MLPerf Power's rule is
the same: the run's begin and end must lie inside the meter's measurement window. A trace that
starts after the window, or one reading per GPU, did not measure the region.
Example: trial 3's window is 13:58:10-13:58:12; the nvidia-smi log holds one poll per GPU at
13:57:59.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.rules._b6 import unsupported
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0601",
    title="trace covers the window",
    protocol_ref="B6",
    severity="error",
    requires=("trials", "power"),
    fix="Start the power logger before the window and stop it after; keep its raw file.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from unsupported(RULE, view, "not_covered", "the trace does not cover the window")


RULE = check
