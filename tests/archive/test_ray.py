"""`--executor ray`: the same workers as Ray tasks. On a local Ray instance the test starts,
the index must equal the local executor's row for row (audit ids and times aside), runs on
shared storage or shipped with their tasks alike. On a simulated three-node cluster
(`ray.cluster_utils.Cluster`, each node its own raylet and object store; the slow tier), a
node removed while the archive is audited loses no run and counts none twice."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import archfactory
import polars as pl
import pytest

from auditor.archive import index
from auditor.archive.core import audit_archive

ray = pytest.importorskip("ray")

#: What differs between two audits of the same runs by design: when, how long, which audit.
VOLATILE = ["audit_id", "audited_at", "audit_seconds", "run_dir"]


def _same_index(a_dir: Path, b_dir: Path) -> None:
    a = pl.read_parquet(a_dir / index.INDEX)
    b = pl.read_parquet(b_dir / index.INDEX)
    assert a.height == b.height == len(archfactory.EXPECTED_VERDICTS)
    assert b["source"].n_unique() == b.height  # none counted twice
    assert a.drop(VOLATILE).equals(b.drop(VOLATILE))
    fa = pl.read_parquet(a_dir / index.FINDINGS).drop("audit_id")
    fb = pl.read_parquet(b_dir / index.FINDINGS).drop("audit_id")
    order = list(fa.columns)
    assert fa.sort(order, nulls_last=True).equals(fb.sort(order, nulls_last=True))


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> tuple[Path, Path]:
    """The mixed archive and its index by the local executor."""
    base = tmp_path_factory.mktemp("ray-mixed")
    src = archfactory.mixed(base)
    local = audit_archive([src], base / "local", jobs=2)
    assert (local.audited, local.failed) == (8, 1)
    return src, base / "local"


@pytest.fixture(scope="module")
def ray_instance():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_index_equals_local_row_for_row(tmp_path: Path, mixed, ray_instance) -> None:
    src, local = mixed
    remote = audit_archive([src], tmp_path / "ray", executor="ray")
    assert (remote.audited, remote.failed, remote.executor) == (8, 1, "ray")
    _same_index(local, tmp_path / "ray")
    # Incremental on Ray too: nothing new to audit.
    assert audit_archive([src], tmp_path / "ray", executor="ray").audited == 0


def test_runs_shipped_to_the_workers_give_the_same_index(
    tmp_path: Path, mixed, ray_instance
) -> None:
    """--ship: each run's files go with its task; the worker audits a private copy, and the
    index (fingerprints and contents included) is the one of the runs on shared storage."""
    src, local = mixed
    shipped = audit_archive([src], tmp_path / "shipped", executor="ray", ship=True)
    assert (shipped.audited, shipped.failed) == (8, 1)
    _same_index(local, tmp_path / "shipped")
    df = pl.read_parquet(tmp_path / "shipped" / index.INDEX)
    assert all("audit-shipped-" not in d for d in df["run_dir"].drop_nulls())
    # the private copies are gone
    assert not list(Path(tempfile.gettempdir()).glob("audit-shipped-*"))


def test_ship_is_refused_without_ray(tmp_path: Path) -> None:
    from auditor.errors import AuditorError

    with pytest.raises(AuditorError, match="--ship goes with --executor ray"):
        audit_archive([tmp_path], tmp_path / "out", ship=True)


def _tracked(trace_dir: str, slow_node: str):
    """`audit_one`, writing which node starts and ends each run under TRACE_DIR; on
    SLOW_NODE it lingers a second first, so its runs are in flight when it goes away."""

    def audit(job, threads=None):
        import ray as r

        from auditor.archive.worker import audit_one

        node = r.get_runtime_context().get_node_id()
        name = job.source.replace("/", "_")
        with open(os.path.join(trace_dir, f"start-{node}-{name}-{os.getpid()}"), "w"):
            pass
        if node == slow_node:
            time.sleep(1.0)
        record = audit_one(job, threads)
        with open(os.path.join(trace_dir, f"end-{node}-{name}-{os.getpid()}"), "w"):
            pass
        return record

    return audit


@pytest.mark.slow  # about 40 s on the 2-core dev machine: three raylets start and stop
def test_a_node_removed_mid_audit_loses_no_run(tmp_path: Path, mixed) -> None:
    from ray.cluster_utils import Cluster

    from auditor.archive.ray_executor import RayExecutor

    src, local = mixed
    store = 80 << 20
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": store, "include_dashboard": False},
    )
    try:
        doomed = cluster.add_node(num_cpus=1, object_store_memory=store)
        cluster.add_node(num_cpus=1, object_store_memory=store)
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes()
        assert len([n for n in ray.nodes() if n["Alive"]]) == 3
        trace = tmp_path / "trace"
        trace.mkdir()
        removed: list[str] = []

        def remove_when_busy(record) -> None:
            """Once a run is in flight on the doomed node, take that node away."""
            if removed:
                return
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                started = {p.name[6:] for p in trace.glob(f"start-{doomed.node_id}-*")}
                ended = {p.name[4:] for p in trace.glob(f"end-{doomed.node_id}-*")}
                if started - ended:
                    break
                time.sleep(0.05)
            cluster.remove_node(doomed, allow_graceful=False)
            removed.append(doomed.node_id)

        executor = RayExecutor(fn=_tracked(str(trace), doomed.node_id))
        out = tmp_path / "cluster"
        outcome = audit_archive([src], out, executor=executor, on_record=remove_when_busy)
        assert removed
        started = {
            p.name.split("-", 2)[2].rsplit("-", 1)[0]
            for p in trace.glob(f"start-{doomed.node_id}-*")
        }
        ended = {
            p.name.split("-", 2)[2].rsplit("-", 1)[0] for p in trace.glob(f"end-{doomed.node_id}-*")
        }
        cut_short = started - ended
        assert cut_short, "no run was in flight on the node when it went away"
        assert (outcome.audited, outcome.failed) == (8, 1)  # the broken archive only
        _same_index(local, out)  # every run once, nothing lost, as the local executor's
        df = pl.read_parquet(out / index.INDEX)
        names = {s.replace("/", "_") for s in df["source"]}
        assert cut_short <= names
    finally:
        ray.shutdown()
        cluster.shutdown()
