"""`--executor ray`: the same workers as Ray tasks, on a local Ray instance the test starts;
the index must equal the local executor's row for row (audit ids and times aside)."""

from __future__ import annotations

from pathlib import Path

import archfactory
import polars as pl
import pytest

from auditor.archive import index
from auditor.archive.core import audit_archive

ray = pytest.importorskip("ray")

#: What differs between two audits of the same runs by design: when, how long, which audit.
VOLATILE = ["audit_id", "audited_at", "audit_seconds", "run_dir"]


@pytest.fixture(scope="module")
def ray_instance():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_index_equals_local_row_for_row(tmp_path: Path, ray_instance) -> None:
    src = archfactory.mixed(tmp_path)
    local = audit_archive([src], tmp_path / "local", jobs=2)
    remote = audit_archive([src], tmp_path / "ray", executor="ray")
    assert (remote.audited, remote.failed) == (local.audited, local.failed) == (8, 1)
    a = pl.read_parquet(tmp_path / "local" / index.INDEX)
    b = pl.read_parquet(tmp_path / "ray" / index.INDEX)
    assert a.height == b.height == len(archfactory.EXPECTED_VERDICTS)
    assert a.drop(VOLATILE).equals(b.drop(VOLATILE))
    fa = pl.read_parquet(tmp_path / "local" / index.FINDINGS).drop("audit_id")
    fb = pl.read_parquet(tmp_path / "ray" / index.FINDINGS).drop("audit_id")
    order = list(fa.columns)
    assert fa.sort(order, nulls_last=True).equals(fb.sort(order, nulls_last=True))
    # Incremental on Ray too: nothing new to audit.
    assert audit_archive([src], tmp_path / "ray", executor="ray").audited == 0
