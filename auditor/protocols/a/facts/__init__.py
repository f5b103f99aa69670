"""Protocol A's facts: every figure the rules, the summary and the report read, derived once
from the raw evidence of a run's view, one module per concern.

- `passes`: the expected-ID index, the indexed output lines, per output file its counts and
  set comparison (`pass_stats`), the CSV rows joined with them, accepted variants and corpora;
- `quality`: the quality metric recomputed from outputs and references (its conventions);
- `claims`: what a CSV row claims about its pass (`with_claims`);
- `timing`: timeline windows, duration summaries, the per-pass table, ranking figures and
  orders, warm spreads;
- `gpus`: the GPU device pattern, GPUs per pass from the placement device maps, the models
  and count used, the torch build, the model files kept;
- `memory`: out-of-memory events, the allocator figures per variant and phase, figures from
  other named sources per process;
- `economics`: the chosen offer, and per offer its package total and cost per accepted
  corpus or why not (the package math itself is `auditor/protocols/a/economics.py`);
- `notes`: the free-text notes and the sentences a pattern finds in them;
- `ids`: identifiers as a reader takes them (normalized, case-folded) and lookalikes.

Conventions: a fact is a frozen dataclass, an immutable mapping or set, or a polars frame (a
value: every operation returns a new frame), computed once per view with
`auditor.protocols.cache.per_view` where it depends on the view alone. A fact module imports
the view only under `if TYPE_CHECKING:`, so `view.py` can import the loaders' helpers from
`passes` without an import cycle. The run's summary built from these facts is
`auditor/protocols/a/summary.py`.
"""
