"""B0602: the power samples over a window are at most the declared interval apart.

What it checks: for each ok trial whose row claims energy (and each policy claiming pooled
figures), no two readings of a summed power series over the window are more than `gap_factor`
(manifest `energy.minimums.gap_factor`, else 1.5) declared sampling periods
(`energy.minimums.sampling_interval_s`) apart, the first reading's own interval included. Our
runner's cumulative counters lose no energy between reads and are not held to it.
Reads: power/<policy_id>/trial-<n>.* (the intervals between readings); manifest
`/energy/minimums`; trials.csv energy cells.
Why it matters: B6 samples at fixed intervals (powermetrics every second, HWiNFO every two):
a reading missed is a stretch of the window whose power was never observed, and the energy
figure assumes what it was.
Example: HWiNFO declared every 2 s; two readings inside the window are 6.1 s apart.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.rules._b6 import unsupported
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0602",
    title="no sampling gap",
    protocol_ref="B6",
    severity="error",
    requires=("trials", "power"),
    fix="Log at the declared interval without dropped samples (a dedicated logger, an idle "
    "machine), or declare the interval the tool really keeps.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from unsupported(RULE, view, "gap", "the trace has a sampling gap")


RULE = check
