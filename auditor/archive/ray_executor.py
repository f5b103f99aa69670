"""`--executor ray`: the archive's runs as Ray tasks, for archives past one machine.

The same worker function as the local executor (`worker.audit_one`), one task per run on an
existing cluster (`--address`, or `RAY_ADDRESS`), or on a local instance started here when
neither is given. Ray keeps its worker processes alive across tasks, so the auditor is
imported once per worker, not once per run. Run dirs (and `--out`, where archives are
extracted) must be on storage every node sees at the same path.

`ray` is the `[cluster]` extra and is imported only in this module.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from auditor.archive.sources import Job
from auditor.archive.worker import RunRecord, audit_one, lost
from auditor.errors import AuditorError

IN_FLIGHT_PER_CPU = 2


class RayExecutor:
    """Runs `audit_one` as Ray tasks (one CPU each); `map` yields records as runs finish."""

    def __init__(self, address: str | None = None, jobs: int | None = None) -> None:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise AuditorError("--executor ray needs the cluster extra: "
                               'pip install "gpubench-audit[cluster]"') from None
        self.address = address
        self.jobs = jobs

    def map(self, jobs: Iterable[Job]) -> Iterator[RunRecord]:
        import ray

        started = False
        if not ray.is_initialized():
            # "local" starts a fresh instance: Ray's own default would join whatever cluster
            # /tmp/ray last recorded, a leftover of another job on this machine.
            address = self.address or os.environ.get("RAY_ADDRESS") or "local"
            kwargs = {"num_cpus": self.jobs} if address == "local" and self.jobs else {}
            ray.init(address=address, include_dashboard=False, log_to_driver=False, **kwargs)
            started = True
        try:
            # One polars thread per task: Ray gives each task one CPU.
            task = ray.remote(num_cpus=1, max_retries=1)(audit_one)
            cpus = int(ray.cluster_resources().get("CPU", 1))
            limit = max(1, cpus) * IN_FLIGHT_PER_CPU
            todo = iter(jobs)
            running: dict = {}
            while True:
                while len(running) < limit:
                    job = next(todo, None)
                    if job is None:
                        break
                    running[task.remote(job, 1)] = job
                if not running:
                    return
                ready, _ = ray.wait(list(running), num_returns=1)
                for ref in ready:
                    job = running.pop(ref)
                    try:
                        yield ray.get(ref)
                    except ray.exceptions.RayError as exc:  # the worker died, or the node
                        yield lost(job, f"the Ray task auditing this run failed "
                                   f"({type(exc).__name__}: {str(exc).splitlines()[0]})")
        finally:
            if started:
                ray.shutdown()
