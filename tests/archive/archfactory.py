"""Mixed archives for the archive tests: a folder and a .tar.gz holding accepted, rejected
and incomplete protocol A runs, and things that are no run or cannot be read."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import runfactory


def accepted(path: Path, **kw) -> Path:
    return runfactory.make_clean_run(path, device="cuda:0", **kw)


def rejected(path: Path, experiment_id: str = "exp-rejected") -> Path:
    """A run whose CSV claims a quality value the outputs do not give (A0205), and whose
    passes are the fastest of all: never to be ranked."""
    run = runfactory.make_clean_run(
        path, device="cuda:0", variants=("batch-16",), experiment_id=experiment_id
    )
    rows = runfactory.read_rows(run)
    for r in rows:
        r["elapsed_seconds"] = str(round(float(r["elapsed_seconds"]) / 10, 6))
    rows[0]["quality_value"] = "0.99"
    runfactory.write_rows(run, rows)
    runfactory.rehash(run)
    return run


def incomplete(path: Path, experiment_id: str = "exp-incomplete") -> Path:
    """A run without its set-check archive (A0006, missing evidence)."""
    run = runfactory.make_clean_run(path, device="cuda:0", experiment_id=experiment_id)
    (run / "checks/set-check.json").unlink()
    runfactory.rehash(run)
    return run


def unreadable_manifest(path: Path) -> Path:
    """A folder whose manifest is not JSON and that holds nothing else."""
    path.mkdir(parents=True)
    (path / "manifest.json").write_text("{ not json", encoding="utf-8")
    return path


def tar_gz(path: Path, root: Path, names: list[str]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for n in names:
            tf.add(root / n, arcname=n)
    return path


def truncated_tar_gz(path: Path, root: Path, name: str) -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.add(root / name, arcname=name)
    data = buf.getvalue()
    path.write_bytes(data[: len(data) // 2])
    return path


def mixed(base: Path) -> Path:
    """`base/src`: a folder of runs (accepted, rejected, incomplete, an unreadable manifest),
    a .tar.gz of three more, and a truncated .tar.gz; every run of its own experiment (two
    runs with one manifest would be copies of one run). Returns the folder."""
    src = base / "src"
    accepted(src / "team-a" / "acc-1")
    accepted(src / "team-a" / "acc-2", experiment_id="exp-batch-2")
    rejected(src / "team-b" / "rej-1")
    incomplete(src / "team-b" / "inc-1")
    unreadable_manifest(src / "team-c" / "garbage")
    staging = base / "staging"
    accepted(staging / "acc-3", experiment_id="exp-batch-3")
    rejected(staging / "rej-2", experiment_id="exp-rejected-2")
    incomplete(staging / "inc-2", experiment_id="exp-incomplete-2")
    tar_gz(src / "old-runs.tar.gz", staging, ["acc-3", "rej-2", "inc-2"])
    truncated_tar_gz(src / "broken.tar.gz", staging, "acc-3")
    return src


EXPECTED_VERDICTS = {
    "team-a/acc-1": "accepted",
    "team-a/acc-2": "accepted",
    "team-b/rej-1": "rejected",
    "team-b/inc-1": "incomplete",
    "team-c/garbage": "rejected",
    "old-runs.tar.gz!/acc-3": "accepted",
    "old-runs.tar.gz!/rej-2": "rejected",
    "old-runs.tar.gz!/inc-2": "incomplete",
    "broken.tar.gz": "unreadable",
}
