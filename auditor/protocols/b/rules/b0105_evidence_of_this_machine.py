"""B0105: every evidence file is of the run's machine.

What it checks: no power trace, placement file or power-state file names another machine
than the run's, part by part, where both name it (`facts/belonging.py`): its host model
(powermetrics' `Machine model`, HWiNFO's `System:` sensor group), its CPU (HWiNFO's
`CPU [#n]:` group), its GPUs by name (HWiNFO's `GPU [#n]:` group, nvidia-smi, a Windows ML
record's assigned GPU), by UUID and by serial (nvidia-smi). The run's machine is
environment.json's (`machine.value`, `cpu.model`, `gpus[].name`, `uuid`, `serial`); a part
it does not name is the one most evidence files name.
Reads: environment.json `/machine`, `/cpu`, `/gpus`; power/*, placement/*, power_state/*
(what each file's header, sensor groups or device fields name).
Why it matters: PROTOCOL.md, "Evidence belongs to the run only when it shows so": a trace
of another machine measures another machine's draw, whatever times it carries; a cheaper
laptop's power log under a workstation's run, or a second GPU's nvidia-smi log, would make
a policy's energy someone else's.
Example: power/ane/trial-3.txt's header says `Machine model: Mac16,6`, environment.json
says `Mac15,6`; power/cuda/trial-1.csv's GPU UUID is GPU-5135..., environment.json's
GPU-8f2e....
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.belonging import describe, machine_mismatches
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0105",
    title="evidence of this machine",
    protocol_ref="B1",
    severity="error",
    requires=("manifest",),
    fix="Keep only the traces and records taken on the machine of the run (the one "
    "environment.json describes); re-measure what was taken elsewhere.",
)
def check(view: RunView) -> Iterator[Finding]:
    for m in machine_mismatches(view):
        yield RULE.finding(
            f"{m.path} is not evidence of this run's machine: {describe(m)}",
            artifact=m.path,
            observed=list(m.named),
            expected=list(m.expected),
            evidence={"part": m.part, "run_machine_from": m.source},
        )


RULE = check
