"""A0605: no pass is dropped silently; every failed pass carries its typed incident.

What it checks: every cold or warm pass of `timeline.jsonl` has its row in
`resultats-bruts.csv`, and a pass whose status is `oom` or `error` has a typed `incident` in
its timeline entry: a `kind` equal to its status and a `message` that is not blank; a pass
recorded `ok` during which PyTorch's allocator counted an out-of-memory event (its memory
trace's `num_ooms` grew) has an `oom` incident saying how it recovered. Notes are free text
and are not read: the incident is the explanation.
Reads: timeline `variant_id`, `phase`, `run_index`, `status`, `incident.kind`,
`incident.message`; CSV `variant_id`, `phase`, `run_index`; memory traces
`memory_stats_before.num_ooms`, `memory_stats_after.num_ooms`.
Why it matters: A6.4: a slow or failed pass left out of the table biases the summary; its row
stays and the incident is explained.
Example: the timeline shows `batch-8/warm-4` ended in `oom` and the CSV has no such row; or
its entry says `"incident": null`; or `batch-8/warm-4` recorded ok while its trace's
`num_ooms` went from 0 to 1.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS, TIMELINE
from auditor.protocols.a.facts.memory import pass_ooms
from auditor.protocols.a.facts.passes import KEY, pass_name
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0605",
    title="no pass dropped silently",
    protocol_ref="A6.4",
    severity="error",
    requires=("results", "timeline"),
    fix="Keep the row of every pass, failed or slow, and explain the incident in notes.",
)
def check(view: RunView) -> Iterator[Finding]:
    passes = view.timeline.filter(pl.col("phase").is_in(["cold", "warm"]))
    for line, v, p, r, status in (
        passes.join(view.results.select(KEY), on=KEY, how="anti")
        .select("line", *KEY, "status")
        .iter_rows()
    ):
        yield RULE.finding(
            f"pass {pass_name(v, p, r)} ran ({status}) but has no row",
            artifact=TIMELINE,
            line=line,
            observed="no row",
            expected=f"a row in {RESULTS}",
            evidence={"status": status},
        )
    ooms = pass_ooms(view)
    for f in passes.filter(pl.col("status") == "ok").iter_rows(named=True):
        key = (f["variant_id"], f["phase"], f["run_index"])
        if ooms.get(key) and f["incident_kind"] != "oom":
            yield RULE.finding(
                f"pass {pass_name(*key)} is recorded ok, but its allocator "
                f"counted {ooms[key]} out-of-memory event(s) during it",
                artifact=TIMELINE,
                line=f["line"],
                pointer="/status",
                observed="ok without an oom incident",
                expected="status oom, or an oom incident saying how the pass recovered",
                protocol_ref="A10.3",
                evidence={"trace": view.memory_trace_files.get(key)},
            )
    failed = view.timeline.filter(pl.col("status") != "ok")
    for f in failed.iter_rows(named=True):
        name = pass_name(f["variant_id"], f["phase"], f["run_index"])
        if not f["incident_kind"]:
            yield RULE.finding(
                f"failed pass {name} ({f['status']}) has no incident recorded",
                artifact=TIMELINE,
                line=f["line"],
                pointer="/incident",
                observed=None,
                expected="incident with kind and message",
            )
            continue
        if f["incident_kind"] != f["status"]:
            yield RULE.finding(
                f"the incident of {name} is {f['incident_kind']!r} while its "
                f"status is {f['status']!r}",
                artifact=TIMELINE,
                line=f["line"],
                pointer="/incident/kind",
                observed=f["incident_kind"],
                expected=f["status"],
            )
        if not (f["incident_message"] or "").strip():
            yield RULE.finding(
                f"the incident of {name} has no message",
                artifact=TIMELINE,
                line=f["line"],
                pointer="/incident/message",
                observed="",
                expected="what happened",
            )


RULE = check
