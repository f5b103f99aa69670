"""B0302: the trials ran in alternating policy order, as recorded.

What it checks: in `manifest.trial_order` no policy runs twice in a row while another
policy still has trials to run; every trial that ran has `order_position` equal to its place
in `trial_order`; and the trials' windows (markers, else started_at/ended_at) follow that order,
one after the other: no window starts before the previous one has ended.
Reads: manifest `/trial_order`; trials.csv `policy_id`, `trial_index`, `order_position`,
`status`, `started_at`; the window markers of the power traces.
Why it matters: B3: alternating spreads drift (temperature, background work, battery level)
over every policy; five trials of one policy then five of the other would put the drift into
the comparison.
Trials whose windows overlap ran at the same time, each the other's foreground load (B2):
neither is a trial of one policy alone.
Example: `trial_order` `[["cpu",1],["cpu",2],["npu",1],...]`: cpu ran twice in a row.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.artifacts import MANIFEST
from auditor.protocols.b.facts.trials import trials
from auditor.protocols.b.rules._where import at_trial
from auditor.protocols.b.subject import policy_subject
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0302",
    title="alternating trial order",
    protocol_ref="B3",
    severity="error",
    requires=("manifest", "trials"),
    fix="Draw the order before measuring so no policy runs twice in a row, and record it.",
)
def check(view: RunView) -> Iterator[Finding]:
    order = [(str(p), int(n)) for p, n in view.m["trial_order"]]
    for i in range(len(order) - 1):
        pid = order[i][0]
        others_left = any(p != pid for p, _ in order[i + 1 :])
        if order[i + 1][0] == pid and others_left:
            yield RULE.finding(
                f"trial_order runs {pid} twice in a row (positions {i + 1} and "
                f"{i + 2}) while other policies still have trials",
                artifact=MANIFEST,
                pointer=f"/trial_order/{i + 1}",
                observed=[list(order[i]), list(order[i + 1])],
                expected="alternating policies",
                subject=policy_subject(pid),
            )
    position = {k: i + 1 for i, k in enumerate(order)}
    ran = [t for t in trials(view) if t.status == "ok"]
    for t in ran:
        if t.claims.get("order_position") != position.get(t.key):
            yield RULE.finding(
                f"{t.name}: order_position {t.claims.get('order_position')}, "
                f"its place in trial_order is {position.get(t.key)}",
                **at_trial(t),
                observed=t.claims.get("order_position"),
                expected=position.get(t.key),
                evidence={"field": "order_position"},
            )
    timed = sorted(
        (t for t in ran if t.start is not None and t.key in position), key=lambda t: t.start or 0
    )
    by_time = [t.key for t in timed]
    recorded = sorted(by_time, key=lambda k: position[k])
    if by_time != recorded:
        first = next(i for i, (a, b) in enumerate(zip(by_time, recorded, strict=True)) if a != b)
        t = timed[first]
        yield RULE.finding(
            f"the trials' windows are not in trial_order: {t.name} started "
            f"{first + 1}th, trial_order puts {recorded[first][0]} trial "
            f"{recorded[first][1]} there",
            **at_trial(t),
            observed=[list(k) for k in by_time[: first + 1]],
            expected=[list(k) for k in recorded[: first + 1]],
        )

    for prev, t in itertools.pairwise(timed):
        if prev.end is not None and t.start is not None and t.start < prev.end:
            yield RULE.finding(
                f"{t.name}'s window starts {(prev.end - t.start) / 1e9:.6g} s "
                f"before {prev.name}'s ends: the two trials ran at the same "
                "time",
                **at_trial(t),
                observed=[list(prev.key), list(t.key)],
                expected="windows one after the other",
                evidence={"field": "started_at"},
            )


RULE = check
