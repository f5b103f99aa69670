"""A0301: within the experiment only the announced factor differs between variants.

What it checks: the manifest's variants agree on every setting but `announced_variable`
(precision, context, device, input order, and batch unless batch is announced). That each
CSV row applies its variant's declaration is A0302's check, so together the rows differ only
in the announced factor.
Reads: manifest `/announced_variable`, `/variants` (`batch`, `precision`, `context`,
`device`, `input_order`).
Why it matters: A3.1 and A3.2: comparing batch 1, 4 and 8 means nothing if batch 8 also ran
in float16; studying precision is a separate experiment with its own quality control.
Example: `announced_variable` is batch, `batch-1` declares float32 and `batch-8` float16.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import MANIFEST
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_SETTINGS = ("batch", "precision", "context", "device", "input_order")


@rule(
    code="A0301",
    title="only the announced factor varies",
    protocol_ref="A3.1",
    severity="error",
    requires=("manifest",),
    fix=(
        "Keep everything but the announced factor identical; study any other factor as a "
        "separate experiment."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    m = view.manifest
    announced = m["announced_variable"]
    variants = m["variants"]
    first = variants[0]
    for n, v in enumerate(variants[1:], start=1):
        for key in _SETTINGS:
            if key != announced and v.get(key) != first.get(key):
                yield RULE.finding(
                    f"variant {v['variant_id']} differs from {first['variant_id']} in {key}, "
                    f"which is not the announced factor ({announced})",
                    artifact=MANIFEST,
                    pointer=f"/variants/{n}/{key}",
                    observed=v.get(key),
                    expected=first.get(key),
                )


RULE = check
