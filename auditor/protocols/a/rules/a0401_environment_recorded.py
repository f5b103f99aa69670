"""A0401: the environment is recorded as observed, and the CSV says the same.

What it checks: `environment.json` exists (schema: device, GPU model, GPU count, driver,
runtime, Python, PyTorch, code version, concurrent load), a CUDA or ROCm device has its GPU
model, driver and runtime version, and each row's `gpu_model`, `device`, `driver_version`,
`python_version`, `torch_version` and `runtime_version` equal the observed environment.
Reads: environment `device`, `gpu_model`, `driver_version`, `runtime`, `python_version`,
`torch_version`; CSV `gpu_model`, `device`, `driver_version`, `python_version`,
`torch_version`, `runtime_version`.
Why it matters: A4.1: the real GPU, driver and runtime decide what a time means; a CSV that
copies an offer's "H100" while the environment observed an A100 compares the wrong machines.
Example: row 2 says `torch_version` 2.3.0 while the environment observed 2.13.0+cpu.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import ENVIRONMENT, RESULTS
from auditor.protocols.a.rules._cells import differing_cells
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0401",
    title="environment recorded",
    protocol_ref="A4.1",
    severity="error",
    requires=("environment", "results"),
    fix=(
        "Record the environment observed on the machine (GPU, driver, runtime), never an "
        "offer's promise."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    env = view.environment
    gpu = env["runtime"]["name"] in ("cuda", "rocm") or env["device"].startswith("cuda")
    if gpu:
        for key, value in (
            ("gpu_model", env["gpu_model"]),
            ("driver_version", env["driver_version"]),
            ("runtime/version", env["runtime"]["version"]),
        ):
            if not value:
                yield RULE.finding(
                    f"{key} not recorded for a GPU run",
                    artifact=ENVIRONMENT,
                    pointer=f"/{key}",
                    observed=value,
                    expected="a value",
                    missing_evidence=True,
                )
    want = {
        "gpu_model": env["gpu_model"] or "",
        "device": env["device"],
        "driver_version": env["driver_version"] or "",
        "python_version": env["python_version"],
        "torch_version": env["torch_version"],
        "runtime_version": env["runtime"]["version"] or "",
    }
    for col, value, bad in differing_cells(view.results, want, null_as=""):
        for row, got in bad.head(20).iter_rows():
            yield RULE.finding(
                f"{col} differs from the environment observed",
                artifact=RESULTS,
                row=row,
                observed=got,
                expected=value,
                evidence={"field": col, "environment": ENVIRONMENT},
            )


RULE = check
