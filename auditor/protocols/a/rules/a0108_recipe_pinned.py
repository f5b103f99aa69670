"""A0108: a workload trained at run time pins its recipe, and the recipe is the run's.

What it checks: a run whose workload trained its weights during the run (the manifest's
`workload.trained_at_run_time`, or weights kept under a name only such a workload writes,
`schemas/revision-kinds.json`) keeps `model/recipe.json` and pins it as `revisions.recipe`
(its hash is A0106's); and a recipe, wherever kept, states this run's code revision, seed,
workload callable and options, context limit, corpus revision and the SHA-256 of the train
split's ID list as kept (`corpus/splits/train_ids.txt`, hashed by the auditor).
Reads: `model/recipe.json`; manifest `/revisions`, `/seed`, `/workload`, `/variants/0/context`;
the hash of `corpus/splits/train_ids.txt`.
Why it matters: A1.2 and the decision on revisions: trained weights are pinned by what made
them (code, seed, training inputs) as well as by their hash; two runs of such a workload are
the same workload only when their recipes are the same, so a recipe that is not the run's
would join runs that trained on other data or seeds.
Example: `recipe.json` says seed 7 while the manifest announces 20260924; or a run trained at
run time keeps `model/weights.pt` and no recipe.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import MANIFEST, RECIPE
from auditor.protocols.a.facts.revisions import expected_recipe, trained_at_run_time
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0108",
    title="recipe of a workload trained at run time",
    protocol_ref="A1.2",
    severity="error",
    requires=("manifest",),
    fix=(
        "Keep model/recipe.json (code, seed, workload, options, context, training inputs) "
        "as the run made it, and pin its SHA-256 as revisions.recipe."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    kept = RECIPE in view.files_on_disk
    if trained_at_run_time(view) and not kept:
        yield RULE.finding(
            "the workload trained its weights during the run but the run keeps "
            f"no {RECIPE}: nothing pins how they were made",
            artifact=MANIFEST,
            pointer="/revisions/recipe",
            observed=view.manifest["revisions"].get("recipe"),
            expected=f"{RECIPE} pinned as revisions.recipe",
        )
    if view.recipe is None:  # absent, or off its schema (A0002 says where)
        return
    want = expected_recipe(view)
    got = view.recipe
    pairs = [
        (f"/{k}", got.get(k), want[k]) for k in ("code", "seed", "workload", "options", "context")
    ]
    pairs += [
        (f"/training_inputs/{k}", got["training_inputs"].get(k), want["training_inputs"][k])
        for k in ("corpus", "ids_sha256")
    ]
    for pointer, observed, expected in pairs:
        if observed != expected:
            yield RULE.finding(
                f"the recipe's {pointer[1:]} is not the run's",
                artifact=RECIPE,
                pointer=pointer,
                observed=observed,
                expected=expected,
            )


RULE = check
