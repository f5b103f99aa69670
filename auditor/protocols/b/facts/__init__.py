"""Every fact of a protocol B run the rules, the report and the run summary judge by,
recomputed from raw evidence once per view (`auditor.protocols.cache.per_view`), each a
frozen dataclass or a polars frame. A claim of the run (a trials.csv or policies.csv cell, a
gate file) is only ever compared with these (`claims.agrees`).

One module per family, each importing only those above it:

| module | the facts |
| --- | --- |
| `claims` | how a claim agrees with a recomputed figure (its rounding) |
| `declared` | the policies, model tier, repetitions and minimums the manifest declares, and |
| | when each part was declared |
| `sequence` | the prompt sequence; per outputs file its lines, latencies, order; gate passes |
| | and each trial's answers against its gate pass |
| `crosscheck` | one power series over a window; counters against power samples (B0605) |
| `energy` | a trial's energy over its window, from any trace (its frame says what it holds) |
| `trials` | every trial: its row, outputs, window and energy; copied latencies |
| `policies` | per policy: median wall time, p95, accuracy and agreement, pooled energy |
| `placement_files` | per placement file: its shares against the policy's floor, its runtime, |
| | capture time and invalid operations; which of a policy's files decides (the raw one |
| | where a record disagrees) |
| `placement` | per policy: where it ran (its deciding file's shares, its residency), the |
| | file's own run, the runtime its evidence is of |
| `belonging` | the run's machine; every evidence file against it, the run's model and the |
| | session's span |
| `checkpoint` | the revisions against the files they name; the checkpoint's labels |
| `integrity` | a trace's samples: runs spliced from another trace, readings duplicated |
| `load` | network traffic in a trial's own sensor log |
| `power_state` | the B9 power-state checks, each judged from its cited file's own word |
| `comparisons` | each accelerator policy against the CPU-only baseline (B7) |

Each module's docstring states its conventions (p95 by nearest rank: `auditor.stats`).
"""
