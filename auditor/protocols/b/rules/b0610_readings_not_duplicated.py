"""B0610: a power trace's samples are not its readings duplicated at shifted times.

What it checks: no power trace (a trial's, or a power-state file's) holds at least
`duplicated_readings.min_count` pairs of equal consecutive samples (every reading, at two
times, the samples around them others), making up `min_share` of its samples
(`facts/integrity.py`, thresholds in schemas/conventions.json). A steady draw
(long runs of equal samples) is never flagged.
Reads: power/*, power_state/* (every sample's readings and time).
Why it matters: B6 asks for at least ten samples inside each window (and powermetrics at
1 s). A 2 s sensor log with every row copied one second later shows twice the samples it
took: the window passes the protocol's floor on readings that were never measured.
Example: power/cpu/trial-2.csv: 12 of its 24 rows repeat the row before, one second later.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.integrity import duplicated_readings
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0610",
    title="readings not duplicated at shifted times",
    protocol_ref="B6",
    severity="error",
    requires=("power",),
    fix="Keep the trace at the interval the tool sampled and declare that interval; a "
    "window with too few samples has no energy figure, it is not padded.",
)
def check(view: RunView) -> Iterator[Finding]:
    for d in duplicated_readings(view):
        shown = ", ".join(str(x) for x in d.lines[:8])
        yield RULE.finding(
            f"{d.path}: {d.repeats} of its {d.samples} samples repeat the "
            f"sample before them alone, reading for reading, at another time "
            f"(line(s) "
            f"{shown}{', ...' if len(d.lines) > 8 else ''}): readings duplicated "
            "onto shifted times are not samples",
            artifact=d.path,
            line=d.lines[0],
            observed=d.repeats,
            expected="samples of their own",
            evidence={"lines": list(d.lines[:20])},
        )


RULE = check
