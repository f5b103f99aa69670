"""A0703: memory figures respect allocated <= reserved and baseline <= peak.

What it checks: in every row and every memory trace, baseline allocated <= baseline reserved,
peak allocated <= peak reserved, baseline allocated <= peak allocated and baseline reserved
<= peak reserved (where both figures are recorded).
Reads: CSV memory cells; memory traces (the same four figures).
Why it matters: A7.3: PyTorch's `allocated` is included in `reserved`, and a peak taken after
a reset cannot be below the baseline; a figure breaking either invariant was swapped,
mis-measured or invented.
Example: row 4 with `peak_allocated_bytes` 3.1 GB and `peak_reserved_bytes` 2.9 GB.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS
from auditor.protocols.a.view import RunView
from auditor.rule import rule

PAIRS = (
    ("baseline_allocated_bytes", "baseline_reserved_bytes"),
    ("peak_allocated_bytes", "peak_reserved_bytes"),
    ("baseline_allocated_bytes", "peak_allocated_bytes"),
    ("baseline_reserved_bytes", "peak_reserved_bytes"),
)


@rule(
    code="A0703",
    title="memory invariants",
    protocol_ref="A7.3",
    severity="error",
    requires=("results",),
    fix=(
        "Read the figures again from the allocator (allocated <= reserved, baseline <= peak); "
        "re-run the pass."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    # One query flags every pair: a clean table costs one, not one per pair.
    flags = view.results.filter(
        pl.any_horizontal((pl.col(low) > pl.col(high)).fill_null(False) for low, high in PAIRS)
    )
    for low, high in PAIRS if flags.height else ():
        bad = flags.filter((pl.col(low) > pl.col(high)).fill_null(False))
        for row, a, b in bad.select("row", low, high).iter_rows():
            yield RULE.finding(
                f"{low} is greater than {high}",
                artifact=RESULTS,
                row=row,
                observed={low: a, high: b},
                expected=f"{low} <= {high}",
            )
    for key in sorted(view.memory_traces):
        doc = view.memory_traces[key]
        for low, high in PAIRS:
            a, b = doc.get(low), doc.get(high)
            if a is not None and b is not None and a > b:
                yield RULE.finding(
                    f"{low} is greater than {high}",
                    artifact=view.memory_trace_files[key],
                    pointer=f"/{low}",
                    observed={low: a, high: b},
                    expected=f"{low} <= {high}",
                )


RULE = check
