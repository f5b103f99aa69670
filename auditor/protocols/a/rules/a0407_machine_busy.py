"""A0407: the machine was not busy with other work while the passes ran.

What it checks: environment.json's `concurrent_load.while_measuring` (the machine's CPU time
less the run's own, over the measured region): other processes used on average less than the
busy fraction of the CPUs (`schemas/load-record.schema.json`, `x-convention`), recomputed from
the record's figures. A busy machine is a warning: the times are real, but slower and more
spread than the configuration's own. A run that recorded no load record is not judged here
(A0401 holds the environment to its schema).
Reads: environment `/concurrent_load/while_measuring` (`cpus`, `other_cpus_mean`,
`other_cpus_max`).
Why it matters: A4.1 and the seed: "any concurrency on the machine" is recorded, because it
changes what a time means; a 2-layer BERT's warm passes took 115 to 250 s beside another
job and the run still read as a clean comparison.
Example: other processes used 1.65 of 2 CPUs on average while the passes ran.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import ENVIRONMENT
from auditor.protocols.a.view import RunView
from auditor.protocols.machine import load_of
from auditor.rule import rule


@rule(
    code="A0407",
    title="machine busy while measuring",
    protocol_ref="A4.1",
    severity="warning",
    requires=("environment",),
    fix=(
        "Measure on a machine with no other work running (or pin the run and the other "
        "work to separate CPUs), and compare only runs measured under the same load."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    load = load_of(view.environment)
    if load is not None and load.busy:
        yield RULE.finding(
            f"{load.sentence()}: the pass times are slower and more spread than on an idle machine",
            **load.shown(ENVIRONMENT),
        )


RULE = check
