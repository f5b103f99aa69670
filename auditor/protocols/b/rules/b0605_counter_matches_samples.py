"""B0605: an energy counter agrees with the same instrument's power samples over the window.

What it checks: for each ok trial with a measured energy whose trace holds, next to a summed
energy counter, power samples of the same instrument, domain and device (our runner's NVML
trace: the energy counter and POWER_INSTANT / POWER_AVERAGE samples), the counter's average
power over the window (its delta over the stretch its readings observe) and the samples'
(integrated over the window by the energy convention, each reading held over its interval,
over the seconds they cover) agree. The samples judge only when dense enough: at least the
declared `sample_periods` readings (and two) over the window, none more than `gap_factor`
declared sampling periods after the previous one, and neither edge of the window left
unobserved longer than that; a sparser series is no evidence either way.
The allowance is a power reading's accuracy: 5 % of the draw (NVML documents +-5 % for
nvmlDeviceGetPowerUsage on Fermi and Kepler, no figure for newer boards) plus 5 W
(nvidia-smi documents +-5 W for power.draw on older boards), plus the
highest sample times the share of the window the samples leave unobserved, plus for a rolling
average (POWER_AVERAGE, nvmlDeviceGetPowerUsage: EVIDENCE.md's 1-second `power.draw`
average) the highest sample times 1 s over the window (its lag at the edges). Beyond 3
allowances the figures disagree: an error (one of them is not the measurement); between one
and three allowances, a warning (the grey band of a load that changes faster than the
samples, a sensor off by more than documented).
Reads: power/<policy_id>/trial-<n>.jsonl (counter and sample records, window markers);
manifest `/energy/minimums` (`sampling_interval_s`, `sample_periods`, `gap_factor`).
Why it matters: B6 and EVIDENCE.md: energy comes from the counter, the samples are its
cross-check. A counter scaled after the fact (the baseline's energy doubled so that an
accelerator looks cheaper, B7) leaves every claim consistent with the trace; only the samples
written beside it still say what the board drew.
Example: cpu trial 1: the NVML counter gives 60 W over the window, its 40 POWER_INSTANT
samples 30 W: 2.00 x, beyond 3 x the allowance of 8 W.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.crosscheck import CROSS_ERROR_FACTOR
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0605",
    title="energy counter matches the power samples",
    protocol_ref="B6",
    severity="error",
    requires=("trials", "power"),
    fix="Report the counter deltas as the instrument read them, and keep the power samples "
    "of the same trace; check the instrument where they disagree.",
)
def check(view: RunView) -> Iterator[Finding]:
    for t in trials(view):
        e = t.energy
        if t.status != "ok" or e is None or not e.measured:
            continue
        for x in e.cross_checks:
            if (
                x.status not in ("grey", "disagrees")
                or x.counter_w is None
                or x.samples_w is None
                or x.allowance_w is None
            ):
                continue
            ratio = f"{x.ratio:.2f} x" if x.ratio is not None else "against 0 W"
            off = abs(x.counter_w - x.samples_w)
            text = (
                f"{t.name}: the {x.name} counter ({x.counter}) gives "
                f"{x.counter_w:.4g} W over the window, the same instrument's "
                f"{x.readings} samples ({x.samples}) {x.samples_w:.4g} W: {ratio}, "
                f"{off:.3g} W apart"
            )
            if x.status == "disagrees":
                text += (
                    f", beyond {CROSS_ERROR_FACTOR:g} x the allowance of "
                    f"{x.allowance_w:.3g} W: one of them is not the measurement"
                )
            else:
                text += (
                    f", beyond the allowance of {x.allowance_w:.3g} W (within "
                    f"{CROSS_ERROR_FACTOR:g} x it)"
                )
            yield RULE.finding(
                text,
                artifact=e.trace,
                severity="error" if x.status == "disagrees" else "warning",
                observed={"counter_w": x.counter_w, "samples_w": x.samples_w},
                expected=f"within {x.allowance_w:.3g} W of each other",
                subject=policy_subject(t.policy_id, t.trial_index),
                evidence={"counter": x.counter, "samples": x.samples, "readings": x.readings},
            )


RULE = check
