"""A0103: training, tuning and evaluation IDs are disjoint, and the declared split sizes are
the archived lists'.

What it checks: the ID sets of `corpus/splits/train_ids.txt`, `corpus/splits/tune_ids.txt`
and `corpus/expected_ids.txt` do not intersect (set comparison in polars, also after Unicode
normalisation and trimming, so `ev-1` and `ev-1 ` are one text), and the manifest's
`corpus.train_size` and `corpus.tune_size` (when declared) count the IDs of those lists.
Reads: the three ID lists; manifest `/corpus/train_size`, `/corpus/tune_size`.
Why it matters: A1.3: an evaluation text seen in training or used to tune the threshold makes
the quality figure optimistic; the corpus would be accepted on data the model already knew.
A declared size that is not the archived list's says the lists are not the ones used.
Example: `ev-000123` appears in both `tune_ids.txt` and `expected_ids.txt`; or the manifest
declares 2,812 training texts and `train_ids.txt` lists 2,000.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import EXPECTED, MANIFEST, SPLITS
from auditor.protocols.a.facts.ids import normalized_id
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0103",
    title="train, tune and evaluation IDs disjoint",
    protocol_ref="A1.3",
    severity="error",
    requires=("splits", "expected_ids"),
    fix=(
        "Rebuild the splits so no ID is in two of them, then re-run (and re-fix the threshold "
        "on the new tune split)."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    sets = {
        "train": (SPLITS["train"], view.splits["train"]),
        "tune": (SPLITS["tune"], view.splits["tune"]),
        "evaluation": (EXPECTED, view.expected_ids),
    }
    names = list(sets)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            (pa, fa), (pb, fb) = sets[a], sets[b]
            na = fa.with_columns(normalized_id().alias("key"))
            nb = fb.select(normalized_id().alias("key"))
            both = na.join(nb, on="key", how="semi").unique("id").sort("line")
            if both.height:
                yield RULE.finding(
                    f"{both.height} ID(s) are in both the {a} and the {b} set",
                    artifact=pa,
                    line=both["line"][0],
                    observed=both["id"].head(20).to_list(),
                    expected="no shared ID",
                    evidence={"other": pb, "count": both.height},
                )
    corpus = (view.manifest or {}).get("corpus") if "manifest" in view.available else None
    for name in ("train", "tune"):
        declared = corpus.get(f"{name}_size") if isinstance(corpus, dict) else None
        listed = view.splits[name].height
        if declared is not None and declared != listed:
            yield RULE.finding(
                f"corpus.{name}_size differs from the IDs archived in {SPLITS[name]}",
                artifact=MANIFEST,
                pointer=f"/corpus/{name}_size",
                observed=declared,
                expected=listed,
                evidence={"list_file": SPLITS[name]},
            )


RULE = check
