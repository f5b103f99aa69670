"""A0402: `gpu_count` is backed by placement evidence of the GPUs actually used.

What it checks: every pass has its placement evidence
(`evidence/placement/<variant>/<phase>-<run>.json`); the row's `gpu_count` equals the number
of distinct GPUs its device map shows holding parameters or inputs (`parameter_devices`,
`input_devices`; the declared `gpus_used` list is not evidence of use, and an entry of it no
device map backs is an error), the row's `device` holds the parameters and is the device the
pass asked for; on a GPU row no parameter tensor and no input batch was on the CPU (a
fallback) and the pass's memory trace was read on that device; and `environment.json`'s
`gpu_count` is the most GPUs any pass used.
Reads: placement `parameter_devices`, `input_devices`, `requested_device`,
`gpus_used[].index`; memory trace `device`; CSV `gpu_count`, `device`; environment
`gpu_count`.
Why it matters: A4.2: a leased lot of two GPUs does not mean the program used both; the count
must come from what the process did, not from the offer or from the GPUs visible.
Example: row 5 says `gpu_count` 2 while its placement shows all parameters on `cuda:0`.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import ENVIRONMENT, RESULTS
from auditor.protocols.a.facts.gpus import gpu_index, gpus_used, pass_gpus
from auditor.protocols.a.facts.passes import KEY, pass_name
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0402",
    title="gpu_count backed by evidence",
    protocol_ref="A4.2",
    severity="error",
    requires=("results", "placement"),
    fix=(
        "Set gpu_count from the placement evidence (the GPUs the process used), not from the offer."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    used = {
        (v, p, n): count for v, p, n, count in pass_gpus(view).select(*KEY, "gpu_count").iter_rows()
    }
    for r in view.results.select("row", *KEY, "gpu_count", "device").iter_rows(named=True):
        key = (r["variant_id"], r["phase"], r["run_index"])
        name = pass_name(*key)
        if key not in used:
            yield RULE.finding(
                f"no placement evidence for pass {name}: gpu_count is unbacked",
                artifact=RESULTS,
                row=r["row"],
                missing_evidence=True,
                observed="absent",
                expected=f"evidence/placement/{name}.json",
            )
            continue
        if r["gpu_count"] != used[key]:
            yield RULE.finding(
                f"gpu_count differs from the GPUs pass {name} actually used",
                artifact=RESULTS,
                row=r["row"],
                observed=r["gpu_count"],
                expected=used[key],
                evidence={"evidence_file": view.placement_files[key]},
            )
        doc = view.placement[key]
        devices = doc["parameter_devices"]
        if devices and _norm(r["device"]) not in {_norm(d) for d in devices}:
            yield RULE.finding(
                f"the parameters of pass {name} were not on the row's device",
                artifact=view.placement_files[key],
                pointer="/parameter_devices",
                observed=devices,
                expected=r["device"],
            )
        elif _norm(doc["requested_device"]) != _norm(r["device"]):
            yield RULE.finding(
                f"pass {name} asked for another device than its row's",
                artifact=view.placement_files[key],
                pointer="/requested_device",
                observed=doc["requested_device"],
                expected=r["device"],
            )
        if gpu_index(r["device"]) is not None:
            for part, what in (
                ("parameter_devices", "parameter tensors"),
                ("input_devices", "input batches"),
            ):
                held = doc[part]
                off = {d: n for d, n in held.items() if n > 0 and gpu_index(d) is None}
                if off:
                    yield RULE.finding(
                        f"{sum(off.values())} of {sum(held.values())} {what} of pass {name} "
                        f"were on {', '.join(sorted(off))}: a {r['device']} pass that fell "
                        "back to the CPU",
                        artifact=view.placement_files[key],
                        pointer=f"/{part}",
                        observed=dict(held),
                        expected=f"all on {r['device']}",
                    )
        trace = view.memory_traces.get(key)
        if (
            trace is not None
            and isinstance(trace.get("device"), str)
            and (_norm(trace["device"]) != _norm(r["device"]))
        ):
            yield RULE.finding(
                f"the memory of pass {name} was read on {trace['device']}, not on the row's device",
                artifact=view.memory_trace_files[key],
                pointer="/device",
                observed=trace["device"],
                expected=r["device"],
            )
    for f, unbacked in (
        pass_gpus(view)
        .filter(pl.col("unbacked").list.len() > 0)
        .select("file", "unbacked")
        .iter_rows()
    ):
        yield RULE.finding(
            f"gpus_used declares GPU(s) {unbacked} that held no parameter or "
            "input of the pass (its device map)",
            artifact=f,
            pointer="/gpus_used",
            observed=unbacked,
            expected="only GPUs the device map shows",
        )
    env = view.environment
    if env is not None and env["gpu_count"] != gpus_used(view):
        yield RULE.finding(
            "environment gpu_count differs from the GPUs the passes used",
            artifact=ENVIRONMENT,
            pointer="/gpu_count",
            observed=env["gpu_count"],
            expected=gpus_used(view),
        )


def _norm(device: str) -> str:
    """`cuda` names the current device, `cuda:0` in a single-process run."""
    return "cuda:0" if device == "cuda" else device


RULE = check
