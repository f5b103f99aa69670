"""B0109: the checkpoint's label map names the run's classes.

What it checks: where the run keeps its checkpoint's `model/config.json` with an `id2label`
map, its labels are the run's classes (`task.classes`), in the order the run maps the
model's outputs to labels (`replay.labels`, where given) (`facts/checkpoint.py`).
Reads: model/config.json `/id2label`; manifest `/task/classes`, `/replay/labels`.
Why it matters: B8's gates compare each answer's label with the references: a checkpoint
whose outputs mean other classes (or the same classes in another order) answers another
task, whatever its agreement with a reference written under the run's labels.
Example: model/config.json maps 0, 1, 2 to `negative, neutral, positive`; the run's classes
are `fruit, tools, weather`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import CHECKPOINT_CONFIG
from auditor.protocols.b.facts.checkpoint import label_mismatch
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0109",
    title="checkpoint labels are the run's classes",
    protocol_ref="B1",
    severity="error",
    requires=("manifest",),
    fix="Keep the checkpoint the run measured, whose id2label names the run's classes in "
    "the order its outputs are read.",
)
def check(view: RunView) -> Iterator[Finding]:
    m = label_mismatch(view)
    if m is not None:
        yield RULE.finding(
            m.why,
            artifact=CHECKPOINT_CONFIG,
            pointer="/id2label",
            observed=list(m.labels),
            expected=list(m.expected),
        )


RULE = check
