"""A0706: a memory cell says what was measured: never 0 bytes on a GPU, never a figure where
the allocator was not measured.

What it checks: on a CUDA or ROCm device, none of the four memory cells is 0 (a pass that ran
a model on the GPU holds its weights: zero bytes means the figure was not measured, and an
empty cell says that); on a device where the allocator was not measured (CPU), the four cells
are empty rather than 0 or a number.
Reads: CSV `device` and memory cells; memory traces `allocator_measured`.
Why it matters: A8.3 with A7.2: an empty cell means "not recorded", zero means really zero; a
0 written for "not measured" is a false measurement.
Example: row 3 on `cuda:0` with `peak_allocated_bytes` 0.
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
    code="A0706",
    title="zero means really zero",
    protocol_ref="A7.2",
    severity="error",
    requires=("results",),
    fix="Leave a cell empty when it was not measured; write 0 only for a real zero.",
)
def check(view: RunView) -> Iterator[Finding]:
    gpu = pl.col("device").str.starts_with("cuda") | pl.col("device").str.starts_with("rocm")
    # One query finds the rows with any zero cell: a clean table costs one, not one per cell.
    zeros = view.results.filter(
        gpu & pl.any_horizontal((pl.col(c) == 0).fill_null(False) for c in CELLS)
    )
    for c in CELLS if zeros.height else ():
        zero = zeros.filter(gpu & (pl.col(c) == 0))
        for row, dev in zero.select("row", "device").iter_rows():
            yield RULE.finding(
                f"{c} is 0 bytes on {dev}: a GPU pass holds memory; an "
                "unmeasured figure is an empty cell",
                artifact=RESULTS,
                row=row,
                observed=0,
                expected="the measured bytes, or empty",
                evidence={"field": c},
            )
    unmeasured = {k for k, d in view.memory_traces.items() if not d["allocator_measured"]}
    cpu = view.results.filter(~gpu)
    for r in cpu.select("row", "variant_id", "phase", "run_index", *CELLS).iter_rows(named=True):
        key = (r["variant_id"], r["phase"], r["run_index"])
        if view.memory_traces and key not in unmeasured:
            continue
        for c in CELLS:
            if r[c] is not None:
                yield RULE.finding(
                    f"{c} is filled on a device whose allocator was not measured",
                    artifact=RESULTS,
                    row=r["row"],
                    observed=r[c],
                    expected="empty (not recorded)",
                    evidence={"field": c},
                )


RULE = check
