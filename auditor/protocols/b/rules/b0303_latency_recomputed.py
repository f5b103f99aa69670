"""B0303: wall times and p95 latencies are what the raw latencies and the window give.

What it checks: per ok trial, `wall_seconds` is the window's length (its trace's markers, else
`ended_at - started_at`), `started_at`/`ended_at` are the markers' instants where the trace
has markers, the latencies of its outputs file add up to no more than the window (they were
timed inside it), and `p95_latency_ms` is their nearest-rank p95, claimed only over at least
`MIN_P95_VALUES` latencies; per policy (policies.csv), `trials` is its number of ok trials,
`median_wall_seconds` the median of their wall times and `p95_latency_ms` the nearest-rank
p95 of all their latencies. Claims are compared at their rounding (facts/claims.py).
Reads: trials.csv `started_at`, `ended_at`, `wall_seconds`, `p95_latency_ms`, `status`;
policies.csv `trials`, `median_wall_seconds`, `p95_latency_ms`; outputs `latency_ms`; the
window markers of the power traces.
Why it matters: B3 reports the median wall time and the p95 latency; a p95 copied from
another run, or computed over the warm-up, is not the trial's, and a p95 over a handful of
values is the maximum by another name.
Example: trials.csv row 2 claims p95 1.12 ms; its 1,000 latencies give 1.51 ms.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.facts.claims import agrees
from auditor.protocols.b.facts.policies import policy_facts
from auditor.protocols.b.facts.trials import MIN_P95_VALUES, trials
from auditor.protocols.b.rules._where import at_policy, at_trial, claim, fmt
from auditor.protocols.b.view import RunView
from auditor.readers import timestamps
from auditor.rule import rule


def _ns_tolerance(text: str) -> int:
    """Half a unit of the last fractional digit of an RFC 3339 time, in nanoseconds."""
    m = re.search(r"\d{2}:\d{2}:\d{2}(?:\.(\d+))?", text)
    digits = min(len(m.group(1) or ""), 9) if m else 0
    return max(1, 5 * 10 ** (8 - digits)) if digits < 9 else 1


@rule(
    code="B0303",
    title="latency and wall time recomputed",
    protocol_ref="B3",
    severity="error",
    requires=("trials",),
    fix="Compute wall times from the window markers and p95 (nearest rank) from the trial's "
    "own latencies.",
)
def check(view: RunView) -> Iterator[Finding]:
    for t in trials(view):
        if t.status != "ok":
            continue
        wall, text = claim(t.claims, t.texts, "wall_seconds")
        if t.wall_s is not None and not agrees(wall, text, t.wall_s):
            yield RULE.finding(
                f"{t.name}: wall_seconds {text or 'empty'}, the window is "
                f"{fmt(t.wall_s)} s ({t.window_from})",
                **at_trial(t),
                observed=wall,
                expected=t.wall_s,
                evidence={"field": "wall_seconds"},
            )
        if t.window_from == "markers":
            for col, ns in (("started_at", t.start), ("ended_at", t.end)):
                said = t.texts.get(col) or ""
                got = timestamps.epoch_ns(said)
                if got is None or ns is None or abs(got - ns) > _ns_tolerance(said):
                    yield RULE.finding(
                        f"{t.name}: {col} {said or 'empty'} is not the trace's window marker",
                        **at_trial(t),
                        observed=said,
                        expected=ns and _iso(ns),
                        evidence={"field": col},
                    )
        if (
            t.sum_ms is not None
            and t.wall_s is not None
            and t.sum_ms / 1000 > t.wall_s * (1 + 1e-6) + 1e-6
        ):
            yield RULE.finding(
                f"{t.name}: its latencies add up to {t.sum_ms / 1000:.6g} s, "
                f"more than its {t.wall_s:.6g} s window: they were not timed "
                "inside it",
                **at_trial(t),
                observed=t.sum_ms / 1000,
                expected=f"<= {t.wall_s}",
                evidence={"output": t.outputs_file},
            )
        p95, text = claim(t.claims, t.texts, "p95_latency_ms")
        yield from _p95(t.name, p95, text, t.p95_ms, t.n_latencies, at_trial(t))
    for f in policy_facts(view).values():
        if not f.claims:
            continue
        where = at_policy(f)
        if f.claims.get("trials") != len(f.ok):
            yield RULE.finding(
                f"policy {f.policy.policy_id}: trials {f.claims.get('trials')}, "
                f"it has {len(f.ok)} ok trial(s)",
                **where,
                observed=f.claims.get("trials"),
                expected=len(f.ok),
                evidence={"field": "trials"},
            )
        med, text = claim(f.claims, f.texts, "median_wall_seconds")
        if not agrees(med, text, f.median_wall_s):
            yield RULE.finding(
                f"policy {f.policy.policy_id}: median_wall_seconds "
                f"{text or 'empty'}, its ok trials give "
                f"{fmt(f.median_wall_s)}",
                **where,
                observed=med,
                expected=f.median_wall_s,
                evidence={"field": "median_wall_seconds"},
            )
        p95, text = claim(f.claims, f.texts, "p95_latency_ms")
        yield from _p95(f"policy {f.policy.policy_id}", p95, text, f.p95_ms, f.n_latencies, where)


def _p95(
    name: str, claimed: float | None, text: str | None, value: float | None, n: int, where: dict
) -> Iterator[Finding]:
    if claimed is not None and n < MIN_P95_VALUES:
        yield RULE.finding(
            f"{name}: a p95 of {text} ms is claimed over {n} latencies; fewer "
            f"than {MIN_P95_VALUES} do not support a p95",
            **where,
            observed=n,
            expected=f">= {MIN_P95_VALUES} latencies",
            evidence={"field": "p95_latency_ms"},
        )
    elif not agrees(claimed, text, value if n else None):
        yield RULE.finding(
            f"{name}: p95_latency_ms {text or 'empty'}, its latencies give "
            f"{fmt(value)} (nearest rank over {n})",
            **where,
            observed=claimed,
            expected=value,
            evidence={"field": "p95_latency_ms"},
        )


def _iso(ns: int) -> str:
    from datetime import UTC, datetime

    return (
        datetime.fromtimestamp(ns // 1_000_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        + f".{ns % 1_000_000_000:09d}Z"
    )


RULE = check
