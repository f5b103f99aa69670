"""A0605: no pass is dropped silently; every incident is explained.

What it checks: every cold or warm pass of `timeline.jsonl` has its row in
`resultats-bruts.csv`, and a pass whose status is `oom` or `error` has an incident in the
timeline and a note in its row that mentions it.
Why it matters: A6.4: a slow or failed pass left out of the table biases the summary; its row
stays and the incident is explained.
Example: the timeline shows `batch-8/warm-4` ended in `oom` and the CSV has no such row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import RESULTS, TIMELINE
from auditor.protocols.a.derive import KEY, pass_name
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_INCIDENT = re.compile(r"oom|out of memory|error|fail|incident|crash|exception", re.IGNORECASE)


@rule(code="A0605", title="no pass dropped silently", protocol_ref="A6.4", severity="error",
      requires=("results", "timeline"),
      fix="Keep the row of every pass, failed or slow, and explain the incident in notes.")
def check(view: RunView) -> Iterator[Finding]:
    passes = view.timeline.filter(pl.col("phase").is_in(["cold", "warm"]))
    for line, v, p, r, status in passes.join(view.results.select(KEY), on=KEY, how="anti").select(
            "line", *KEY, "status").iter_rows():
        yield RULE.finding(f"pass {pass_name(v, p, r)} ran ({status}) but has no row",
                           artifact=TIMELINE, line=line, observed="no row",
                           expected=f"a row in {RESULTS}", status=status)
    failed = passes.filter(pl.col("status") != "ok").join(
        view.results.select(*KEY, "row", "notes"), on=KEY, how="inner")
    for f in failed.iter_rows(named=True):
        name = pass_name(f["variant_id"], f["phase"], f["run_index"])
        if not f["incident_kind"]:
            yield RULE.finding(f"failed pass {name} has no incident recorded", artifact=TIMELINE,
                               line=f['line'], observed=None,
                               expected="incident with kind and message")
        if not _INCIDENT.search(f["notes"] or ""):
            yield RULE.finding(f"failed pass {name} ({f['status']}) is not explained in notes",
                               artifact=RESULTS, row=f["row"],
                               observed=f["notes"], expected="the incident explained")


RULE = check
