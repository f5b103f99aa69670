"""`--executor local`: the archive's runs over `--jobs` worker processes on this machine.

Each worker is started once (spawned, so no polars thread pool is inherited mid-flight),
imports the auditor once (`worker.init`) and audits run after run. Results come back in the
order they finish. At most two runs per worker are in flight, so the parent never holds
more than that of the archive.

A worker that dies (killed, out of memory) breaks the pool: the runs that were in flight are
tried again in a fresh pool, one at a time, and a run that breaks a pool on its own is
recorded as lost, so one poisonous run can neither stop the archive nor take others with it.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from auditor.archive.sources import Job
from auditor.archive.worker import RunRecord, audit_one, init, lost
from auditor.errors import AuditorError

IN_FLIGHT_PER_WORKER = 2
DEAD_POOLS = 3
"""Pools broken in a row, with no run audited in between, that mean workers cannot start."""


def _init_worker(threads: int, parent: int) -> None:
    """A pool worker's start: `worker.init`, and a watch that ends the worker when its
    parent is gone, so an archive audit killed outright leaves no orphan worker behind."""
    init(threads)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class LocalExecutor:
    """Runs `audit_one` over JOBS processes; `map` yields records as runs finish."""

    name = "local"

    def __init__(
        self, jobs: int | None = None, fn: Callable[[Job, int | None], RunRecord] = audit_one
    ) -> None:
        self.jobs = max(1, jobs or default_jobs())
        self.threads = max(1, default_jobs() // self.jobs)
        self.fn = fn
        """The worker function (a module-level function the workers can import)."""

    def _pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            self.jobs,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(self.threads, os.getpid()),
        )

    def map(self, jobs: Iterable[Job]) -> Iterator[RunRecord]:
        todo = iter(jobs)
        suspects: list[Job] = []  # in flight when a worker died: tried again, one at a time
        pool = self._pool()
        running: dict[Future, tuple[Job, bool]] = {}
        dead_pools = 0
        try:
            while True:
                limit = 1 if suspects else self.jobs * IN_FLIGHT_PER_WORKER
                while len(running) < limit:
                    alone = bool(suspects)
                    job = suspects.pop(0) if alone else next(todo, None)
                    if job is None:
                        break
                    running[pool.submit(self.fn, job, self.threads)] = (job, alone)
                if not running:
                    return
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                broken = False
                for fut in done:
                    job, alone = running.pop(fut)
                    try:
                        record = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        if alone:  # it broke a pool on its own: it is the cause
                            yield lost(
                                job, "the worker auditing this run died (killed, or out of memory?)"
                            )
                        else:
                            suspects.append(job)
                    else:
                        dead_pools = 0
                        yield record
                if broken:
                    dead_pools += 1
                    if dead_pools >= DEAD_POOLS:
                        raise AuditorError(
                            f"{DEAD_POOLS} worker pools in a row died before auditing a run: "
                            "the workers cannot start (spawned workers re-import the main "
                            "module: run audit archive from a file or the CLI, not stdin)"
                        )
                    suspects += [job for job, _ in running.values()]
                    running.clear()
                    pool.shutdown(wait=False, cancel_futures=True)
                    pool = self._pool()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
