"""B0901: a Windows ML run records its power-state checks, each with its evidence.

What it checks: a run with a Windows ML policy (declared, or a policy whose placement
evidence is a Windows ML session: the seed's Windows procedure) records in its manifest
`power_state_checks` both checks: `battery_skips_discrete_gpu` (unplugged, the discrete-GPU
rung of the provider ladder is skipped) and `idle_unloads_discrete_gpu` (an idle session
unloads without keeping the discrete GPU awake), each with a `result` (`passed`, `failed`,
or `not_applicable` with the reason in `detail`: no discrete GPU) and, for `passed`, the
`evidence` it rests on (a file of the run: the record of the session chosen on battery, a
power trace of the discrete GPU going idle after the last trial; `auditor/protocols/b/facts/
power_state.py` says what each must show, each file judged on its own word: a battery trace
by its own battery sensor, a record by the session it records, the release level the
protocol's 1 W, never the run's). An absent check, a bare `passed` (no evidence, evidence
the run does not hold, or evidence that does not speak to the check), and `not_applicable`
on a machine whose own evidence shows a discrete GPU (environment.json's `gpus`, a trace's
GPU power) are missing evidence; a failed check, or evidence that shows the opposite of
`passed`, an error.
Reads: manifest `/power_state_checks`, `/policies/*/runtime`; power_state/*, placement/*,
power/* (the files a check cites); environment.json `/gpus`.
Why it matters: B9: the energy a policy saves in a benchmark is lost in the field if
unplugging still selects the discrete GPU, or an idle app keeps it powered; "passed" with
nothing behind it is a claim, not a check.
Example: `{"battery_skips_discrete_gpu": {"result": "passed"}}` with no evidence; a record of
the battery session that holds NvTensorRTRTXExecutionProvider on the NVIDIA RTX A2000.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST
from auditor.protocols.b.facts.declared import policies
from auditor.protocols.b.facts.placement import is_windows_ml
from auditor.protocols.b.facts.power_state import (
    CHECKS,
    RESULTS,
    discrete_gpu,
    power_state_checks,
)
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0901",
    title="power-state checks recorded",
    protocol_ref="B9",
    severity="error",
    requires=("manifest",),
    fix="Unplug the machine and record which providers the session then holds (a Windows "
    "ML record); leave a session idle and log the discrete GPU's power until it powers "
    "down (HWiNFO); keep both files and cite them in power_state_checks.",
)
def check(view: RunView) -> Iterator[Finding]:
    if not any(is_windows_ml(view, pid) for pid in policies(view)):
        return
    gpu = discrete_gpu(view)
    for key, c in power_state_checks(view).items():
        what = CHECKS[key]
        where: dict[str, Any] = {"artifact": MANIFEST, "pointer": f"/power_state_checks/{key}"}
        if c.result not in RESULTS:
            yield RULE.finding(
                f"the check that {what} is not recorded",
                **where,
                observed=c.result,
                expected=list(RESULTS),
                missing_evidence=True,
            )
        elif c.result == "failed":
            yield RULE.finding(
                f"the check that {what} failed" + (f": {c.detail}" if c.detail else ""),
                **where,
                observed="failed",
                expected="passed",
            )
        elif c.result == "not_applicable":
            if not c.detail:
                yield RULE.finding(
                    f"the check that {what} is marked not applicable without a reason",
                    **where,
                    observed="not_applicable",
                    expected="a reason in detail",
                    missing_evidence=True,
                )
            elif gpu:
                yield RULE.finding(
                    f"the check that {what} is marked not applicable "
                    f"({c.detail}), but the run's evidence shows a discrete "
                    f"GPU ({gpu}): the check is not shown",
                    **where,
                    observed="not_applicable",
                    expected="the check, with evidence",
                    missing_evidence=True,
                    evidence={"discrete_gpu": gpu},
                )
        elif c.contradicts:
            yield RULE.finding(
                f"the check that {what} is recorded as passed, but its "
                f"evidence shows otherwise: {c.contradicts}",
                **where,
                observed=c.contradicts,
                expected="passed, as recorded",
                evidence={"cited": list(c.cited)},
            )
        elif c.shows is None:
            if not c.cited:
                why = "cites no evidence"
            elif len(c.unreadable) == len(c.cited):
                why = (
                    f"cites {', '.join(c.unreadable)}, which the run does not hold or no "
                    "reader can read"
                )
            elif c.rejected:
                why = f"its evidence shows nothing of it ({'; '.join(c.rejected)})"
            else:
                why = (
                    f"cites {', '.join(c.cited)}, which shows nothing of the discrete GPU "
                    "for this check"
                )
            yield RULE.finding(
                f"the check that {what} is recorded as passed but {why}: a "
                "bare 'passed' is no evidence",
                **where,
                observed=list(c.cited),
                expected="a trace or record showing it",
                missing_evidence=True,
            )


RULE = check
