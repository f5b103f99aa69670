"""A0103: training, tuning and evaluation IDs are disjoint.

What it checks: the ID sets of `corpus/splits/train_ids.txt`, `corpus/splits/tune_ids.txt`
and `corpus/expected_ids.txt` do not intersect (set comparison in polars).
Why it matters: A1.3: an evaluation text seen in training or used to tune the threshold makes
the quality figure optimistic; the corpus would be accepted on data the model already knew.
Example: `ev-000123` appears in both `tune_ids.txt` and `expected_ids.txt`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import EXPECTED, SPLITS
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(code="A0103", title="train, tune and evaluation IDs disjoint", protocol_ref="A1.3",
      severity="error", requires=("splits", "expected_ids"),
      fix=("Rebuild the splits so no ID is in two of them, then re-run (and re-fix the threshold "
           "on the new tune split)."))
def check(view: RunView) -> Iterator[Finding]:
    sets = {"train": (SPLITS["train"], view.splits["train"]),
            "tune": (SPLITS["tune"], view.splits["tune"]),
            "evaluation": (EXPECTED, view.expected_ids)}
    names = list(sets)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            (pa, fa), (pb, fb) = sets[a], sets[b]
            both = fa.join(fb.select("id"), on="id", how="semi").unique("id").sort("line")
            if both.height:
                yield RULE.finding(
                    f"{both.height} ID(s) are in both the {a} and the {b} set", artifact=pa,
                    line=both['line'][0], observed=both["id"].head(20).to_list(),
                    expected="no shared ID", other=pb, count=both.height)


RULE = check
