"""`--executor ray`: the archive's runs as Ray tasks, for archives past one machine.

The same worker function as the local executor (`worker.audit_one`), one task per run on an
existing cluster (`--address`, or `RAY_ADDRESS`), or on a local instance started here when
neither is given. Ray keeps its worker processes alive across tasks, so the auditor is
imported once per worker, not once per run.

Where the runs are: on storage every node sees at the same path (the default: a task gets
the run dir's path), or, with `ship`, read here and sent with the task (`worker.pack`), the
worker auditing a private copy (`worker.audit_shipped`): for nodes that do not see the
archive. Either way the record names the run dir this machine sees.

A node that goes away (removed, crashed, preempted) takes its tasks with it: Ray runs them
again elsewhere (`TASK_RETRIES`), and a task that still fails is submitted again by this
executor (`RESUBMITS`) before its run is recorded as lost, so a lost node loses no run, and
since each run is yielded once, none is counted twice (a retried task has no side effect:
it only reads the run). Each record carries its worker's auditor version, and
`core.audit_archive` refuses a record from a node running other code.

`ray` is the `[cluster]` extra and is imported only in this module.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from auditor.archive.sources import Job
from auditor.archive.worker import RunRecord, audit_one, audit_shipped, lost, pack
from auditor.errors import AuditorError

IN_FLIGHT_PER_CPU = 2
TASK_RETRIES = 3
"""Ray's own retries of a task whose worker or node died."""
RESUBMITS = 2
"""This executor's submissions again of a run whose task still failed (its retries spent on
nodes that went away one after the other, or its result lost with its node)."""


class RayExecutor:
    """Runs `audit_one` as Ray tasks (one CPU each); `map` yields records as runs finish."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        jobs: int | None = None,
        *,
        ship: bool = False,
        fn: Callable[[Job, int | None], RunRecord] = audit_one,
    ) -> None:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise AuditorError(
                '--executor ray needs the cluster extra: pip install "gpubench-audit[cluster]"'
            ) from None
        self.address = address
        self.jobs = jobs
        self.ship = ship
        self.fn = fn
        """The worker function when runs are not shipped (a module-level function the
        workers can import)."""

    def map(self, jobs: Iterable[Job]) -> Iterator[RunRecord]:
        import ray

        started = False
        if not ray.is_initialized():
            # "local" starts a fresh instance: Ray's own default would join whatever cluster
            # /tmp/ray last recorded, a leftover of another job on this machine.
            address = self.address or os.environ.get("RAY_ADDRESS") or "local"
            kwargs: dict[str, Any] = (
                {"num_cpus": self.jobs} if address == "local" and self.jobs else {}
            )
            ray.init(address=address, include_dashboard=False, log_to_driver=False, **kwargs)
            started = True
        try:
            # One polars thread per task: Ray gives each task one CPU.
            remote = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)
            task: Any = remote(audit_shipped) if self.ship else remote(self.fn)

            def submit(job: Job) -> Any:
                return task.remote(job, pack(job.run_dir), 1) if self.ship else task.remote(job, 1)

            cpus = int(ray.cluster_resources().get("CPU", 1))
            limit = max(1, cpus) * IN_FLIGHT_PER_CPU
            todo = iter(jobs)
            running: dict = {}  # ref -> (job, submissions so far)
            while True:
                while len(running) < limit:
                    job = next(todo, None)
                    if job is None:
                        break
                    running[submit(job)] = (job, 1)
                if not running:
                    return
                ready, _ = ray.wait(list(running), num_returns=1)
                for ref in ready:
                    job, tries = running.pop(ref)
                    try:
                        record = ray.get(ref)
                    except ray.exceptions.RayError as exc:  # its worker or node died
                        if tries <= RESUBMITS:
                            running[submit(job)] = (job, tries + 1)
                            continue
                        record = lost(
                            job,
                            f"the Ray task auditing this run failed "
                            f"{tries} time(s) ({type(exc).__name__}: "
                            f"{str(exc).splitlines()[0]})",
                        )
                    yield record
        finally:
            if started:
                ray.shutdown()
