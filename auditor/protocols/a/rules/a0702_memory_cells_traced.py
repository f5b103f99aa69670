"""A0702: the CSV's memory cells are the ones the memory trace recorded.

What it checks: every pass has its memory trace (`traces/memory/<variant>/<phase>-<run>.json`),
and its row's four memory cells (`baseline_allocated_bytes`, `baseline_reserved_bytes`,
`peak_allocated_bytes`, `peak_reserved_bytes`) equal the trace's (an empty cell for a null).
Reads: CSV memory cells; memory traces (the same four figures).
Why it matters: A7.2: baselines and absolute peaks are recorded per phase; a CSV figure that
is not the traced one cannot be checked and may come from another pass or another source.
Example: row 6 says `peak_reserved_bytes` 2147483648 and the trace recorded 1912602624.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.facts.passes import pass_name
from auditor.protocols.a.view import RunView
from auditor.rule import rule

CELLS = (
    "baseline_allocated_bytes",
    "baseline_reserved_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
)


@rule(
    code="A0702",
    title="memory cells equal the trace",
    protocol_ref="A7.2",
    severity="error",
    requires=("results", "memory_traces"),
    fix=(
        "Write the memory cells from the pass's own trace; re-run the pass if the trace is missing."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    for r in view.results.select("row", "variant_id", "phase", "run_index", *CELLS).iter_rows(
        named=True
    ):
        key = (r["variant_id"], r["phase"], r["run_index"])
        doc = view.memory_traces.get(key)
        if doc is None:
            yield RULE.finding(
                f"no memory trace for pass {pass_name(*key)}",
                artifact=RESULTS,
                row=r["row"],
                missing_evidence=True,
                observed="absent",
                expected=f"traces/memory/{pass_name(*key)}.json",
            )
            continue
        for c in CELLS:
            if r[c] != doc.get(c):
                yield RULE.finding(
                    f"{c} differs from the memory trace",
                    artifact=RESULTS,
                    row=r["row"],
                    observed=r[c],
                    expected=doc.get(c),
                    evidence={"field": c, "trace": view.memory_trace_files[key]},
                )


RULE = check
