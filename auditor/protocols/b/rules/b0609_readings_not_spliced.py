"""B0609: no power trace holds a run of another trace's readings.

What it checks: no run of consecutive samples of a power trace (a trial's, or a power-state
file's) is found in another trace of the run under other times: a run of
`spliced_readings.run` samples, each of several readings and enough of them different that
live sensors never repeat it (`facts/integrity.py`, thresholds in
schemas/conventions.json). Whole copies are B0607's.
Reads: power/*, power_state/* (every sample's readings and time).
Why it matters: B6 takes a window's energy from the power of its own inference region. A
window partly spliced from another policy's trace (the cheaper policy's quiet seconds pasted
over the baseline's busy ones, re-timed) measures the other policy for those seconds: the
comparison is not of two measurements.
Example: power/cpu/trial-3.csv lines 9-12 hold, reading for reading, power/gpu/trial-2.csv
lines 9-12 under other times.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.integrity import spliced_readings
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0609",
    title="readings not spliced from another trace",
    protocol_ref="B6",
    severity="error",
    requires=("power",),
    fix="Keep each trace as its tool wrote it; re-measure a window whose trace was edited.",
)
def check(view: RunView) -> Iterator[Finding]:
    for s in spliced_readings(view):
        where = f"in {s.source} (lines {s.source_lines[0]}-{s.source_lines[1]})"
        yield RULE.finding(
            f"{s.path}: the samples of lines {s.lines[0]}-{s.lines[1]} are, "
            f"reading for reading, those {where} under other times: they were "
            "spliced in, not measured",
            artifact=s.path,
            line=s.lines[0],
            observed=f"lines {s.lines[0]}-{s.lines[1]}",
            expected="readings of its own",
            evidence={"copy_of": s.source, "lines": list(s.source_lines)},
        )


RULE = check
