"""B0101: the run records what B1 asks: artifact, code commit, machine, OS, power source and mode.

What it checks: the manifest's `artifact_sha256` and `revisions.code` (the app or build
commit) are not empty; environment.json gives a value for the machine model, the OS build
(`os.os_release` or the kernel), the power source (`ac` or `battery`) and the power mode; and
every `ok` trial's row repeats the power source and power mode read at its start. A fact
recorded as not available (with its reason) is missing evidence, not an error: the verdict
is `incomplete` until it is recorded. A trial's power source or mode other than the
environment snapshot's is a warning naming both values and files: it may be honest (the
machine plugged in after the snapshot), but the snapshot then does not describe the trials;
trials of an accelerator policy and of the CPU baseline on different power sources are
B0701's error (B7 compares them only on the same power source).
Reads: manifest `/artifact_sha256`, `/revisions/code`; environment.json `/machine/value`,
`/os`, `/power_source/value`, `/power_mode/value`; trials.csv `power_source`, `power_mode`,
`status`.
Why it matters: B1; energy figures mean nothing without the machine and its power state: a
laptop on battery in a power-saving mode draws differently, and B7 compares policies only on
the same machine and power source.
Example: environment.json `power_source` `{"value": null, "not_available": "no
/sys/class/power_supply"}`: the power source is not recorded.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import ENVIRONMENT, MANIFEST, TRIALS
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0101",
    title="B1 metadata recorded",
    protocol_ref="B1",
    severity="error",
    requires=("manifest", "environment", "trials"),
    fix=(
        "Record the machine model, OS build, power source and power mode where the OS "
        "exposes them (pmset, powercfg, /sys/class/power_supply), and the build commit."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    m, env = view.m, view.environment or {}
    if not str(m.get("artifact_sha256") or "").strip():
        yield RULE.finding(
            "the manifest records no artifact SHA-256",
            artifact=MANIFEST,
            pointer="/artifact_sha256",
            observed=None,
            expected="64 hex",
        )
    if not str((m.get("revisions") or {}).get("code") or "").strip():
        yield RULE.finding(
            "the manifest records no code commit",
            artifact=MANIFEST,
            pointer="/revisions/code",
            observed="",
            expected="a commit",
        )
    os_ = env.get("os") or {}
    os_build = os_.get("os_release") or os_.get("kernel_release") or os_.get("build")
    facts = [
        ("machine model", "/machine", (env.get("machine") or {})),
        ("power source", "/power_source", (env.get("power_source") or {})),
        ("power mode", "/power_mode", (env.get("power_mode") or {})),
    ]
    for what, pointer, fact in facts:
        if fact.get("value") in (None, ""):
            yield RULE.finding(
                f"the {what} is not recorded: {fact.get('not_available') or 'no value'}",
                artifact=ENVIRONMENT,
                pointer=f"{pointer}/value",
                observed=None,
                expected=f"the {what}",
                missing_evidence=True,
            )
    if not os_build:
        yield RULE.finding(
            "the OS build is not recorded",
            artifact=ENVIRONMENT,
            pointer="/os",
            observed=None,
            expected="os_release or kernel_release",
            missing_evidence=True,
        )
    ok = [t for t in trials(view) if t.status == "ok"]
    for col in ("power_source", "power_mode"):
        said = (env.get(col) or {}).get("value") if isinstance(env.get(col), dict) else None
        other = [
            t
            for t in ok
            if t.claims.get(col) not in (None, "")
            and said not in (None, "")
            and str(t.claims[col]).strip().lower() != str(said).strip().lower()
        ]
        if other:
            first, what = other[0], col.replace("_", " ")
            values = sorted({str(t.claims[col]) for t in other})
            yield RULE.finding(
                f"{ENVIRONMENT} /{col}/value says {said!r}, {len(other)} ok trial(s) in "
                f"{TRIALS} record the {what} {' / '.join(map(repr, values))} at their start, "
                f"the first {first.name} (row {first.row}): the {what} changed after the "
                "snapshot, or one of the two is not what the machine was on",
                **at_trial(first),
                severity="warning",
                observed=values,
                expected=said,
                evidence={
                    "field": col,
                    "environment_pointer": f"/{col}/value",
                    "trials": [t.name for t in other[:20]],
                },
            )
        lacking = [t for t in ok if t.claims.get(col) in (None, "")]
        if lacking:
            first = lacking[0]
            yield RULE.finding(
                f"{len(lacking)} ok trial(s) do not record the "
                f"{col.replace('_', ' ')} at their start, the first "
                f"{first.name}",
                **at_trial(first),
                expected=f"the {col.replace('_', ' ')} of every trial",
                missing_evidence=True,
                evidence={"field": col, "trials": [t.name for t in lacking[:20]]},
            )


RULE = check
