"""A0105: each pass wrote its own output, trace and placement files, in its own process.

What it checks: a cold or warm pass's timeline entry names its own files
(`outputs/<variant>/<phase>-<run>.jsonl`, `traces/memory/...json`,
`evidence/placement/...json`) when it names them, and the placement evidence of the pass was
written by the process the timeline says ran it (its `pid`).
Reads: timeline `variant_id`, `phase`, `run_index`, `pid`, `output_file`, `memory_trace`,
`placement`; placement evidence `pid`.
Why it matters: A1.4 keeps every individual output so the run can be audited; a pass that
points at another pass's files, or whose evidence was written by another process (a copy of
a neighbour's placement record), has no evidence of its own.
Example: the timeline entry of `batch-4/cold-1` says pid 4012 and its placement record was
written by pid 4013, the process of `batch-8/cold-1`.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import MEMORY_TRACES, OUTPUTS, PLACEMENT, TIMELINE
from auditor.protocols.a.facts.gpus import pass_gpus
from auditor.protocols.a.facts.passes import KEY, pass_name
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_OWN = {
    "output_file": (OUTPUTS, "jsonl"),
    "memory_trace": (MEMORY_TRACES, "json"),
    "placement": (PLACEMENT, "json"),
}


@rule(
    code="A0105",
    title="each pass's own files and process",
    protocol_ref="A1.4",
    severity="error",
    requires=("timeline",),
)
def check(view: RunView) -> Iterator[Finding]:
    passes = view.timeline.filter(pl.col("phase").is_in(["cold", "warm"]))
    for e in passes.iter_rows(named=True):
        name = pass_name(e["variant_id"], e["phase"], e["run_index"])
        for field, (folder, ext) in _OWN.items():
            own = f"{folder}{name}.{ext}"
            if e[field] is not None and e[field] != own:
                yield RULE.finding(
                    f"pass {name} names {e[field]} as its {field}, not its own file",
                    artifact=TIMELINE,
                    line=e["line"],
                    pointer=f"/{field}",
                    observed=e[field],
                    expected=own,
                )
    if not view.placement:
        return
    placed = pass_gpus(view).select(*KEY, "file", pl.col("pid").alias("placement_pid"))
    both = passes.join(placed, on=KEY, how="inner").filter(
        pl.col("placement_pid").is_not_null() & (pl.col("placement_pid") != pl.col("pid"))
    )
    for r in both.iter_rows(named=True):
        yield RULE.finding(
            f"the placement evidence of {pass_name(*(r[k] for k in KEY))} was "
            f"written by pid {r['placement_pid']}, not by the pass's process",
            artifact=r["file"],
            pointer="/pid",
            observed=r["placement_pid"],
            expected=r["pid"],
            evidence={"timeline_line": r["line"]},
        )


RULE = check
