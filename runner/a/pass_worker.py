"""A cold pass in a fresh process (A6.5): `python -m runner.a.pass_worker JOB.json`.

The job names the workload, the staged model directory, the run dir and the pass. The worker
loads the model (timed apart as `load_seconds`, A5.2), runs the pass with the same machinery
as the warm passes, writes its output, memory trace and placement evidence into the run dir,
and writes its record to the job's `result` path. Whatever happens, it exits 0 after writing
a record when it can; the runner treats a missing record as an error of that pass.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch

from runner.a.passes import PassSpec, run_pass
from runner.records import incident_of, now_iso
from runner.workloads import resolve


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    torch.set_num_threads(int(job["threads"]))
    spec = PassSpec(**job["spec"])
    run_dir = Path(job["run_dir"])
    result_path = Path(job["result"])
    started = now_iso()
    t0 = time.perf_counter()
    try:
        factory = resolve(job["workload"])
        workload = factory.load(
            Path(job["model_dir"]), spec.device, job["precision"], job["context"], job["options"]
        )
    except Exception as exc:  # the model did not load: the pass failed before it started
        record: dict[str, Any] = {
            "entry": spec.entry(
                status="error",
                started_at=started,
                ended_at=now_iso(),
                elapsed_seconds=None,
                load_seconds=time.perf_counter() - t0,
                pid=os.getpid(),
                fresh_process=True,
                memory_trace=None,
                placement=None,
                incident=incident_of(exc),
            ),
            "cells": None,
            "gpus_used": [],
            "answers": 0,
        }
    else:
        load_seconds = time.perf_counter() - t0
        record = run_pass(workload, spec, run_dir, fresh_process=True, load_seconds=load_seconds)
    result_path.write_text(json.dumps(record), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
