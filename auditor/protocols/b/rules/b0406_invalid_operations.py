"""B0406: no operation counts on the accelerator where its report shows it cannot run there.

What it checks: in a per-operation cost report of an accelerator policy (a file that gives
the estimated cost of its placed operations: Core ML's E5RT profiling CSV or dictionaries, a
compute plan), every operation placed on the accelerator has an estimate on that device.
E5RT leaves a backend it marks invalid for an operation ("Unsupported tensor format: fp32.")
without an estimate, and the readers expose that absence (a null cost), not the mark: such an
operation is counted as placed but never on the accelerator (its shares say so), and each is
this error, with its line.
Reads: placement/* (device and cost of every operation); manifest `/policies/*/role`,
`/compute_units`.
Why it matters: B5 asks for the Neural Engine operation share against the artifact's floor;
a report edited to select `ane` for the operations its own columns mark invalid on the Neural
Engine lifts the share over a floor the model does not meet.
Example: `placement/ane.e5rt.csv` line 2 selects `ane` for `ios17.tensor_buffer_to_tensor`,
whose `ane` backend the same row leaves without an estimate ("Unsupported tensor format").
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.declared import policies
from auditor.protocols.b.facts.placement import placements
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule

SHOWN = 5
"""Operations named in the message; the evidence lists the lines of all (up to 100)."""


@rule(
    code="B0406",
    title="operations the report marks invalid",
    protocol_ref="B4",
    severity="error",
    requires=("manifest",),
    fix="Keep the tool's report as it wrote it: an operation its report cannot run on the "
    "accelerator runs elsewhere, and the share must say so.",
)
def check(view: RunView) -> Iterator[Finding]:
    pols = policies(view)
    for pid, p in placements(view).items():
        pol = pols.get(pid)
        if not p.invalid or pol is None or pol.role != "accelerator":
            continue
        where = "/".join(sorted(pol.accelerator)) or "the accelerator"
        shown = ", ".join(f"line {line} {op}" for line, op in p.invalid[:SHOWN])
        more = f" and {len(p.invalid) - SHOWN} more" if len(p.invalid) > SHOWN else ""
        yield RULE.finding(
            f"policy {pid}: {p.used} places {len(p.invalid)} operation(s) on "
            f"{where} with no estimate there ({shown}{more}): the report does "
            "not show the accelerator can run them; counted off it",
            artifact=p.used,
            line=p.invalid[0][0],
            observed=len(p.invalid),
            expected=0,
            subject=policy_subject(pid),
            evidence={"lines": [line for line, _ in p.invalid[:100]]},
        )


RULE = check
