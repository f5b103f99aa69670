"""B0901: a Windows ML run records its power-state checks.

What it checks: a run with a Windows ML policy (the seed's Windows procedure) records in its
manifest `power_state_checks` both checks: `battery_skips_discrete_gpu` (unplugged, the
discrete-GPU rung of the provider ladder is skipped) and `idle_unloads_discrete_gpu` (an idle
session unloads without keeping the discrete GPU awake), each with a `result` (`passed`,
`failed`, or `not_applicable` with the reason in `detail`: no discrete GPU). An absent check
is missing evidence; a failed one an error.
Reads: manifest `/power_state_checks`, `/policies/*/runtime`.
Why it matters: B9: the energy a policy saves in a benchmark is lost in the field if
unplugging still selects the discrete GPU, or an idle app keeps it powered.
Example: `{"battery_skips_discrete_gpu": {"result": "failed", "detail": "DmlExecutionProvider
selected on battery"}}`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST
from auditor.protocols.b.facts.declared import WINDOWS_ML_RUNTIMES, policies
from auditor.protocols.b.view import RunView
from auditor.rule import rule

CHECKS = {"battery_skips_discrete_gpu": "on battery the discrete-GPU rung is skipped",
          "idle_unloads_discrete_gpu": "an idle session unloads without keeping the discrete "
                                       "GPU awake"}
RESULTS = ("passed", "failed", "not_applicable")


@rule(code="B0901", title="power-state checks recorded", protocol_ref="B9", severity="error",
      requires=("manifest",),
      fix="Unplug the machine and check which provider is selected; leave a session idle and "
          "check the discrete GPU powers down; record both results in power_state_checks.")
def check(view: RunView) -> Iterator[Finding]:
    if not any(p.runtime.lower() in WINDOWS_ML_RUNTIMES for p in policies(view).values()):
        return
    checks = view.m.get("power_state_checks")
    checks = checks if isinstance(checks, dict) else {}
    for key, what in CHECKS.items():
        entry = checks.get(key)
        pointer = f"/power_state_checks/{key}"
        result = entry.get("result") if isinstance(entry, dict) else None
        detail = entry.get("detail") if isinstance(entry, dict) else None
        if result not in RESULTS:
            yield RULE.finding(f"the check that {what} is not recorded", artifact=MANIFEST,
                               pointer=pointer, observed=result, expected=list(RESULTS),
                               missing_evidence=True)
        elif result == "failed":
            yield RULE.finding(f"the check that {what} failed"
                               + (f": {detail}" if detail else ""), artifact=MANIFEST,
                               pointer=pointer, observed="failed", expected="passed")
        elif result == "not_applicable" and not detail:
            yield RULE.finding(f"the check that {what} is marked not applicable without a "
                               "reason", artifact=MANIFEST, pointer=pointer,
                               observed="not_applicable", expected="a reason in detail",
                               missing_evidence=True)


RULE = check
