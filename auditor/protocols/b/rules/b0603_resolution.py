"""B0603: an energy figure comes from a window above the declared resolution.

What it checks: for each ok trial whose row claims energy (and each policy claiming pooled
figures), the window is at least the declared minimum (`energy.minimums.window_seconds`), each
summed power series has at least `sample_periods` readings over it, and each energy counter
changed at least `counter_updates` times inside it. Below any of them the figure is "below
resolution": a number claimed from it is unsupported, like a p95 from five values.
Reads: power/<policy_id>/trial-<n>.* (readings and counter updates over the window);
manifest `/energy/minimums`; trials.csv energy cells.
Why it matters: B6 and EVIDENCE.md's window problem: 1,000 inferences take a fraction of a
second on a fast device, shorter than one powermetrics sample or one NVML counter update; a
joules-per-inference figure from one sample is quantisation noise.
Example: a 0.98 s window covered by one 5.02 s powermetrics sample: 1 reading, 10 declared.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.rules._b6 import unsupported
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0603",
    title="energy above resolution",
    protocol_ref="B6",
    severity="error",
    requires=("trials", "power"),
    fix="Lengthen the window (repeat the sequence a declared number of times inside it) "
    "until it spans the declared sampling periods and counter updates.",
)
def check(view: RunView) -> Iterator[Finding]:
    yield from unsupported(
        RULE, view, "below_resolution", "the window is below the declared resolution"
    )


RULE = check
