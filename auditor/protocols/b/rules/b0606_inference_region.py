"""B0606: each trial's window is its inference region, not padded with idle time.

What it checks: for each ok trial whose window and latencies are known, the seconds of the
window its per-inference latencies do not account for (window minus the sum of its outputs'
`latency_ms`, the whole sequence and its repetitions) are at most `PAD_SHARE` of the window
plus `PAD_ABS_S`: the loop around the inferences (reading the next prompt, writing the
answer) and the timer's edges, not idle time. Beyond, the window holds time that is not the
1,000-inference region.
Reads: the trial's window (its trace's markers, else trials.csv `started_at`/`ended_at`);
outputs/<policy_id>/trial-<n>.jsonl `latency_ms`.
Why it matters: B6 samples power "over the 1,000-inference region". Idle seconds padded onto
a window lower its average power (the accelerator idles at a fraction of its load power), so
a policy padded this way looks cheaper than the CPU-only baseline it is compared with (B7);
its joules per inference take in idle energy that is not the inferences'.
Example: `ane` trial 2's window is 3.0 s while its 1,000 latencies add up to 1.2 s: 1.8 s of
the window is not inference.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.view import RunView
from auditor.rule import rule

PAD_SHARE = 0.10
"""The loop around the inferences may take this share of the window (our runner's own
windows: 0.1 % to 2 % beside the sum of their latencies, on a loaded 2-core machine)."""
PAD_ABS_S = 0.25
"""... plus this many seconds (the timer's edges, a first prompt read from disk)."""


@rule(
    code="B0606",
    title="window is the inference region",
    protocol_ref="B6",
    severity="error",
    requires=("trials", "outputs"),
    fix="Mark the window around the inference loop only (start after the warm-up and "
    "idle, end at the last answer), and time every inference inside it.",
)
def check(view: RunView) -> Iterator[Finding]:
    for t in trials(view):
        extra = t.unaccounted_s
        if t.status != "ok" or extra is None or t.wall_s is None:
            continue
        allowed = PAD_SHARE * t.wall_s + PAD_ABS_S
        if extra > allowed:
            yield RULE.finding(
                f"{t.name}: its window lasts {t.wall_s:.3f} s but its {t.lines} latencies add "
                f"up to {t.sum_ms / 1000:.3f} s: {extra:.3f} s of the window is not inference "
                f"(at most {allowed:.3f} s is the loop around it)",
                **at_trial(t),
                observed=round(extra, 6),
                expected=f"at most {allowed:.3f} s",
                evidence={
                    "window_s": t.wall_s,
                    "latency_sum_s": t.sum_ms / 1000,
                    "window_from": t.window_from,
                    "output": t.outputs_file,
                },
            )


RULE = check
