"""A0707: GPU passes record their memory (warning when they do not).

What it checks: rows on a CUDA or ROCm device with any of the four memory cells empty.
Reads: CSV `device` and memory cells.
Why it matters: A7.2 asks for the baselines and peaks of every GPU phase; an empty cell is
honest ("not recorded") but leaves the memory comparison without data, so it is pointed out.
Example: row 8 on `cuda:0` with `peak_reserved_bytes` empty.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.rules.a0702_memory_cells_traced import CELLS
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0707",
    title="GPU memory recorded",
    protocol_ref="A7.2",
    severity="warning",
    requires=("results",),
    fix="Record the allocator's baselines and peaks on every GPU pass.",
)
def check(view: RunView) -> Iterator[Finding]:
    gpu = pl.col("device").str.starts_with("cuda") | pl.col("device").str.starts_with("rocm")
    empty = pl.any_horizontal([pl.col(c).is_null() for c in CELLS])
    for r in view.results.filter(gpu & empty).select("row", "device", *CELLS).iter_rows(named=True):
        missing = [c for c in CELLS if r[c] is None]
        yield RULE.finding(
            f"GPU pass on {r['device']} without memory recorded ({', '.join(missing)})",
            artifact=RESULTS,
            row=r["row"],
            observed=None,
            expected="bytes",
            evidence={"columns": missing},
        )


RULE = check
