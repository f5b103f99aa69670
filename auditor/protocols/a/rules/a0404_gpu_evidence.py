"""A0404: the GPUs a run claims are the ones its evidence shows, on a build that can use them.

What it checks: no CUDA or ROCm device is claimed (in a pass's device map, a row's `device`
or the environment's `device`) on a torch build that cannot use one (a `+cpu` build, or a
`cpu` runtime); no GPU model is named (environment `gpu_model`) when no pass's device map
holds a GPU; the environment's `gpu_model` is the driver's name of the GPUs the device maps
show (their identity records, as the runner writes them: sorted, `, `-joined); every GPU
a device map shows has the driver's identity record; and no process (its placement's
`gpus_visible`) nor the environment saw fewer GPUs than the device maps show used.
Reads: placement `parameter_devices`, `input_devices`, `gpus_used[].index`,
`gpus_used[].name`, `gpus_visible`; CSV `device`; environment `device`, `gpu_model`,
`gpus_visible`, `torch_version`, `runtime.name`, `runtime.version`.
Why it matters: A4.1 records the real GPU and the observed environment; a GPU named in the
files that no pass put a tensor on, or a CUDA pass on a CPU-only build, is a declaration,
not an observation, and an offer's cost per corpus would be computed for hardware that never
ran (A9).
Example: a run on `torch 2.13.0+cpu` whose rows and placement say `cuda:0`, or an
environment naming "NVIDIA H100 80GB HBM3" while every device map says `cpu`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import ENVIRONMENT, RESULTS
from auditor.protocols.a.facts.gpus import (
    gpu_index,
    gpu_models,
    is_gpu_device,
    pass_gpus,
    torch_build,
)
from auditor.protocols.a.facts.passes import KEY
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0404",
    title="GPUs as evidenced, on a build that can use them",
    protocol_ref="A4.1",
    severity="error",
    requires=("environment",),
)
def check(view: RunView) -> Iterator[Finding]:
    env = view.environment
    gpus = pass_gpus(view) if "placement" in view.available else None
    if torch_build(view) == "cpu":
        build = f"torch {env['torch_version']}, runtime {env['runtime']['name']}"
        if gpu_index(env["device"]) is not None:
            yield RULE.finding(
                f"the environment's device is {env['device']} on a build that "
                f"cannot use a GPU ({build})",
                artifact=ENVIRONMENT,
                pointer="/device",
                observed=env["device"],
                expected="cpu",
            )
        if view.results is not None:
            gpu_rows = view.results.filter(is_gpu_device())
            for row, dev in gpu_rows.select("row", "device").head(20).iter_rows():
                yield RULE.finding(
                    f"row on {dev} from a build that cannot use a GPU ({build})",
                    artifact=RESULTS,
                    row=row,
                    observed=dev,
                    expected="cpu",
                    evidence={"field": "device"},
                )
        if gpus is not None:
            for f, held in (
                gpus.filter(pl.col("gpu_count") > 0).select("file", "devices").head(20).iter_rows()
            ):
                yield RULE.finding(
                    f"the device map puts tensors on {held} while the build "
                    f"cannot use a GPU ({build})",
                    artifact=f,
                    pointer="/parameter_devices",
                    observed=held,
                    expected="cpu",
                    evidence={"environment": ENVIRONMENT},
                )
    if gpus is None:
        return
    shown = ", ".join(sorted(gpu_models(view))) or None
    if env["gpu_model"] != shown:
        yield RULE.finding(
            "the environment names a GPU model no pass's device map shows"
            if shown is None
            else "the environment's GPU model is not the driver's name of the GPUs the passes used",
            artifact=ENVIRONMENT,
            pointer="/gpu_model",
            observed=env["gpu_model"],
            expected=shown,
        )
    visible = {k: d.get("gpus_visible") for k, d in view.placement.items()}
    for v, ph, r, f, n in gpus.select(*KEY, "file", "gpu_count").iter_rows():
        seen = visible.get((v, ph, r))
        if isinstance(seen, int) and seen < n:
            yield RULE.finding(
                f"the process saw {seen} GPU(s) and its device map shows tensors on {n}",
                artifact=f,
                pointer="/gpus_visible",
                observed=seen,
                expected=f">= {n}",
            )
    used = int(cast(int | None, gpus["gpu_count"].max()) or 0) if gpus.height else 0
    if isinstance(env.get("gpus_visible"), int) and env["gpus_visible"] < used:
        yield RULE.finding(
            f"the environment saw {env['gpus_visible']} GPU(s) and the passes used {used}",
            artifact=ENVIRONMENT,
            pointer="/gpus_visible",
            observed=env["gpus_visible"],
            expected=f">= {used}",
        )
    for f, missing in (
        gpus.filter(pl.col("unidentified").list.len() > 0)
        .select("file", "unidentified")
        .iter_rows()
    ):
        yield RULE.finding(
            f"GPU(s) {missing} held the pass's tensors but have no identity "
            "record (model, uuid) in gpus_used",
            artifact=f,
            pointer="/gpus_used",
            observed=None,
            expected=f"the driver's identity of GPU {missing}",
            missing_evidence=True,
        )


RULE = check
