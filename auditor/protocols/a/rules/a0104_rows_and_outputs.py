"""A0104: every pass row has its output file and every output file its row.

What it checks: the (variant_id, phase, run_index) keys of `resultats-bruts.csv` against the
files `outputs/<variant_id>/<phase>-<run_index>.jsonl`.
Reads: CSV `variant_id`, `phase`, `run_index`; the names of the files under `outputs/`.
Why it matters: A1.4 keeps every individual output so the run can be audited; a row without
outputs makes claims nobody can check, and an output without a row is a pass that was
measured and then left out of the table.
Example: row 9 is `batch-4/warm-3` and `outputs/batch-4/warm-3.jsonl` does not exist.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.facts.passes import KEY, pass_name
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0104",
    title="pass rows and output files match",
    protocol_ref="A1.4",
    severity="error",
    requires=("results",),
    fix=(
        "Keep one output file per pass row: re-run the pass whose output is missing, or drop "
        "the stray file."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    rows = view.results.select([*KEY, "row"])
    idx = view.output_index
    for v, p, r, row in rows.join(idx, on=KEY, how="anti").iter_rows():
        yield RULE.finding(
            f"pass {pass_name(v, p, r)} has a row but no output file",
            artifact=RESULTS,
            row=row,
            missing_evidence=True,
            observed="no file",
            expected=f"outputs/{pass_name(v, p, r)}.jsonl",
        )
    for v, p, r, f in idx.join(rows, on=KEY, how="anti").iter_rows():
        yield RULE.finding(
            f"output file of pass {pass_name(v, p, r)} has no row in {RESULTS}",
            artifact=f,
            observed="no row",
            expected="one row per pass",
        )


RULE = check
