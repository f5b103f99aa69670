"""A0606: each cold pass ran in a fresh process of its own.

What it checks: cold passes in `timeline.jsonl` have `fresh_process` true and a pid no other
entry (cold pass, warm-up or warm pass) used. A cold pass in a fresh process whose
`load_seconds` is 0 gets a warning naming the pass: a new process loads the model before its
first pass (A5.2 times that apart), which takes time; a zero says the model was already
loaded, or that the clock was too coarse to see the load (hence a warning, not an error). An
empty `load_seconds` (not recorded, A8.3) is not judged.
Reads: timeline `phase`, `pid`, `fresh_process`, `load_seconds`.
Why it matters: A6.5: first passes are comparable only when each starts from a new process;
a "cold" pass run after another pass in the same process inherits its caches and compiled
kernels.
Example: `batch-4/cold-1` ran with pid 4012, the pid of `batch-1/cold-1`; or
`batch-1/cold-2` claims a fresh process and `"load_seconds": 0`.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import TIMELINE
from auditor.protocols.a.facts.passes import pass_name
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0606",
    title="cold passes in fresh processes",
    protocol_ref="A6.5",
    severity="error",
    requires=("timeline",),
    fix="Start each cold pass in a fresh process, or compare no first passes.",
)
def check(view: RunView) -> Iterator[Finding]:
    t = view.timeline
    shared = t.group_by("pid").agg(pl.len().alias("uses"))  # warm-ups count too
    cold = t.filter(pl.col("phase") == "cold").join(shared, on="pid", how="left")
    for c in cold.iter_rows(named=True):
        name = pass_name(c["variant_id"], "cold", c["run_index"])
        if not c["fresh_process"]:
            yield RULE.finding(
                f"cold pass {name} did not run in a fresh process",
                artifact=TIMELINE,
                line=c["line"],
                observed=False,
                expected=True,
            )
        elif (c["uses"] or 0) > 1:
            yield RULE.finding(
                f"cold pass {name} shares its process (pid {c['pid']}) with another pass",
                artifact=TIMELINE,
                line=c["line"],
                observed=c["pid"],
                expected="a pid of its own",
            )
        elif c["load_seconds"] == 0:
            yield RULE.finding(
                f"cold pass {name} ran in a fresh process but its model load "
                "took 0 s: a new process loads the model first, so either it "
                "was already loaded or the clock was too coarse to see it",
                artifact=TIMELINE,
                line=c["line"],
                severity="warning",
                observed=0,
                expected="load_seconds > 0 (or empty: not recorded)",
            )


RULE = check
