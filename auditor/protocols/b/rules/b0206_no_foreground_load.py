"""B0206: no other load on the machine while the trials ran.

What it checks: environment.json's `concurrent_load.while_measuring` (the machine's CPU time
less the run's own, over the trials): other processes used on average less than the busy
fraction of the CPUs (`schemas/load-record.schema.json`, `x-convention`), recomputed from the
record's figures. A busy machine is a warning: latencies and power are real but include
another's work. A run that recorded no load record is not judged here.
Reads: environment `/concurrent_load/while_measuring` (`cpus`, `other_cpus_mean`,
`other_cpus_max`).
Why it matters: B2 asks for "no network or foreground load": another process's work raises
the package power and the latencies of every policy, and the CPU baseline most.
Example: other processes used 1.2 of 2 CPUs on average while the trials ran.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import ENVIRONMENT
from auditor.protocols.b.view import RunView
from auditor.protocols.machine import load_of
from auditor.rule import rule


@rule(
    code="B0206",
    title="no foreground load",
    protocol_ref="B2",
    severity="warning",
    requires=("environment",),
    fix="Measure with no other work running on the machine (B2), then run the trials again.",
)
def check(view: RunView) -> Iterator[Finding]:
    load = load_of(view.environment)
    if load is not None and load.busy:
        yield RULE.finding(
            f"{load.sentence()}: latencies and power include other work (B2 asks for no "
            "foreground load)",
            **load.shown(ENVIRONMENT),
        )


RULE = check
