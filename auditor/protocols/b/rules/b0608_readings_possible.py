"""B0608: every power reading of a trace is one an instrument can give.

What it checks: no reading of a trial's power trace is negative, not finite, or beyond one
device's draw (5 kW); no CPU package reads below the sum of its own cores in the same
sample; no combined reading (powermetrics' CPU + GPU + ANE) differs from the sum of its parts
by more than the tool's rounding. A trace holding such a reading measures no window (its
energy is `inconsistent`): an energy figure claimed from it is one of this rule's findings
too.
Reads: power/<policy_id>/trial-<n>.* (every reading: domain, device, time, watts, energy).
Why it matters: B6 takes a window's energy from the raw trace. One reading edited to a
negative or astronomical value, a package lowered below its own cores, or a total that is
not its parts would make a policy's figure meaningless, or cheaper than what was drawn; a
trace that contradicts itself is not a measurement.
Example: power/cpu/trial-2.csv line 14: CPU Package Power 3.1 W while IA Cores Power reads
9.8 W in the same sample.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.consistency import SHOWN, inconsistencies
from auditor.protocols.b.rules._b6 import unsupported
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0608",
    title="power readings an instrument can give",
    protocol_ref="B6",
    severity="error",
    requires=("power",),
    fix="Keep the tool's own trace as it wrote it; a trace that was edited, merged or "
    "corrupted measures nothing (re-measure the trial).",
)
def check(view: RunView) -> Iterator[Finding]:
    for path, found in sorted(inconsistencies(view).items()):
        first = found[0]
        shown = "; ".join(f"line {x.line}: {x.what}" for x in found[:SHOWN])
        more = f" (and {len(found) - SHOWN} more)" if len(found) > SHOWN else ""
        yield RULE.finding(
            f"{len(found)} reading(s) no instrument gives: {shown}{more}",
            artifact=path,
            line=first.line,
            observed=first.observed,
            expected=first.expected,
            evidence={"readings": [x.line for x in found[:20]]},
        )
    yield from unsupported(
        RULE, view, "inconsistent", "its trace holds readings no instrument gives"
    )


RULE = check
